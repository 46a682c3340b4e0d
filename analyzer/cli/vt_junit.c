/* vt_junit.c — JUnit XML of the check's gates (contract in vt_junit.h). */
#include "vt_junit.h"

#include <errno.h>
#include <string.h>

/* s, len bytes, as XML character data or an attribute value: &, <, >, " escaped;
 * what XML 1.0 does not allow as '?': control characters other than tab and newline,
 * and the noncharacters U+FFFE and U+FFFF (UTF-8 EF BF BE / EF BF BF). */
static void xml_text(FILE *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xEF && i + 2 < len && (unsigned char)s[i + 1] == 0xBF &&
            ((unsigned char)s[i + 2] == 0xBE || (unsigned char)s[i + 2] == 0xBF)) {
            fputc('?', f);
            i += 2;
            continue;
        }
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(c < 0x20 && c != '\t' && c != '\n' ? '?' : (int)c, f); break;
        }
    }
}

int vt_junit_write(FILE *f, const char *path, const vt_gate *g, size_t n)
{
    size_t fails = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        fails += g[i].state == VT_GATE_FAIL;
        errors += g[i].state == VT_GATE_INCONCLUSIVE;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"vramtrace check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n"
               "  <testsuite name=\"vramtrace check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\">\n",
            n, fails, errors, n, fails, errors);
    for (size_t i = 0; i < n; i++) {
        fputs("    <testcase classname=\"vramtrace.", f);
        xml_text(f, g[i].process, strlen(g[i].process));
        fputs("\" name=\"", f);
        xml_text(f, g[i].name, strlen(g[i].name));
        if (g[i].state == VT_GATE_PASS) {
            fputs("\"/>\n", f);
            continue;
        }
        const char *nl = strchr(g[i].text, '\n');
        size_t first = nl ? (size_t)(nl - g[i].text) : g[i].len;
        fputs(g[i].state == VT_GATE_FAIL ? "\">\n      <failure type=\"gate\" message=\""
                                         : "\">\n      <error type=\"inconclusive\" message=\"", f);
        xml_text(f, g[i].text, first);
        fputs("\">", f);
        xml_text(f, g[i].text, g[i].len);
        fputs(g[i].state == VT_GATE_FAIL ? "</failure>\n    </testcase>\n" : "</error>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "vramtrace: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
