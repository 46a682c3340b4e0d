/* vt_display.h — strings from a traced program, made safe to show.
 *
 * Everything a report shows that the traced program chose — its command line, host
 * name, function and source file names (DWARF or Python), an OOM's API name, the
 * snapshot file's own path — may hold bytes a terminal acts on: ESC sequences that
 * clear the screen or set the window title, CR/LF that forge lines in a CI log,
 * Unicode bidirectional overrides that reorder what is read ("Trojan Source",
 * CVE-2021-42574). The text outputs, the error messages and every label go through
 * here once, when the analyzer takes the string in; JSON, HTML and the exports then
 * carry the same visible form.
 *
 * The form: printable ASCII and valid UTF-8 (RFC 3629: shortest form, no surrogates,
 * at most U+10FFFF) are kept; a C0 control byte, DEL or a byte that is not part of
 * valid UTF-8 becomes "\xNN" (two lowercase hex digits); the C1 controls
 * U+0080..U+009F, U+2028/U+2029 and the bidi embedding, override and isolate
 * characters (U+202A..U+202E, U+2066..U+2069) become "\uNNNN". A backslash is kept
 * as it is (the form is for reading, not for decoding back).
 *
 * Pure functions, thread-safe.
 */
#ifndef VT_DISPLAY_H
#define VT_DISPLAY_H

#include <stddef.h>

/* Writes the display form of s (NUL-terminated) into dst (cap bytes, cap >= 1),
 * NUL-terminated, cut at a whole character or escape, never inside one. Returns the
 * length the whole display form has (not counting the NUL), as snprintf does. */
size_t vt_display(char *dst, size_t cap, const char *s);

/* The display form of s in a new string (vt_xmalloc; the caller frees it); NULL for
 * a NULL s. */
char *vt_xdisplay(const char *s);

/* 1 when s needs no change (its display form is itself), else 0. */
int vt_display_clean(const char *s);

/* Cuts s (NUL-terminated, from snprintf into a fixed buffer) back to the end of its
 * last whole UTF-8 character, so a truncated name is never left with half of one. */
void vt_utf8_trim(char *s);

#endif /* VT_DISPLAY_H */
