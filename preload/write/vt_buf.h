/* vt_buf.h — growable byte buffer with JSON formatting, no stdio.
 *
 * The writer formats a whole record into one vt_buf and hands it to write(2), so a
 * record reaches the file whole or (killed mid-write) as one torn last line.
 * Memory: malloc/realloc (writer side only, never the hook fast path). On allocation
 * failure the buffer sets ->oom and ignores further appends; check it before writing.
 * Not thread-safe: one owner at a time.
 */
#ifndef VT_BUF_H
#define VT_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct vt_buf {
    char  *p;      /* owned                                    */
    size_t len;    /* bytes used                               */
    size_t cap;    /* bytes allocated                          */
    int    oom;    /* an append failed; content is incomplete  */
} vt_buf;

void vt_buf_init(vt_buf *b);
void vt_buf_free(vt_buf *b);
void vt_buf_reset(vt_buf *b);                      /* len = 0, oom = 0, keeps memory */
void vt_buf_put(vt_buf *b, const char *s, size_t n);
void vt_buf_cstr(vt_buf *b, const char *s);        /* raw, no quoting             */
void vt_buf_u64(vt_buf *b, uint64_t v);
/* v in decimal when known != 0, else null (a figure that could not be read). */
void vt_buf_u64_or_null(vt_buf *b, int known, uint64_t v);
/* For a formatter that writes many fields at once: vt_buf_reserve makes room for n
 * more bytes (1, or 0 when out of memory: ->oom set); then vt_buf_u64_at writes v in
 * decimal at dst (at most VT_BUF_U64_MAX bytes, no terminator) and returns the
 * length; the caller adds the bytes it wrote to ->len. */
#define VT_BUF_U64_MAX 20
int    vt_buf_reserve(vt_buf *b, size_t n);
size_t vt_buf_u64_at(char *dst, uint64_t v);
void vt_buf_i64(vt_buf *b, int64_t v);
void vt_buf_hex(vt_buf *b, uint64_t v);            /* lowercase, no 0x            */
/* Non-negative finite v with 6 decimals ("0.312500"); NaN/inf/negative -> null. */
void vt_buf_fixed6(vt_buf *b, double v);
/* JSON string with quotes; NULL -> null. Control characters and invalid UTF-8 bytes
 * are escaped (\u00XX) so the line is always valid JSON/UTF-8. At most max bytes of s
 * are used (0 = no limit). */
void vt_buf_jstr(vt_buf *b, const char *s, size_t max);

#endif /* VT_BUF_H */
