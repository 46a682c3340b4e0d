/* vt_log.h — the preload's only output to the program's stderr.
 *
 * Every line starts with "vramtrace: ", is formatted into a stack buffer (no stdio,
 * no allocation for the formats used here) and is written with one write(2) to fd 2,
 * so it never interleaves inside another line. errno is preserved.
 * Thread safety: any thread; async-signal-safe only for vt_log_raw.
 */
#ifndef VT_LOG_H
#define VT_LOG_H

enum { VT_LOG_QUIET = 0, VT_LOG_WARN = 1, VT_LOG_INFO = 2, VT_LOG_DEBUG = 3 };

/* Current level (VRAMTRACE_LOG); default VT_LOG_WARN. Set by vt_config. */
extern int vt__log_level;

/* Writes "vramtrace: <formatted>\n" when level <= the current level. Lines longer
 * than 1024 bytes are cut. Each byte of a control character (C0, DEL, C1), a line
 * separator or bidi override, and each byte that is not UTF-8, is written as '?':
 * a name the program chose cannot forge lines or send terminal escapes, and the line
 * is valid UTF-8. */
void vt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes msg (already complete, with its newline) to fd 2 whatever the level. */
void vt_log_raw(const char *msg, unsigned len);

#endif /* VT_LOG_H */
