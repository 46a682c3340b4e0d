/* vt_size.h — byte sizes as users write and read them.
 *
 * Parsing: a SIZE argument of the command line accepts a plain byte
 * count ("4096"), binary units ("4KiB", "1.5GiB": KiB/MiB/GiB/TiB = 2^10..2^40)
 * and decimal units ("2MB": kB/KB/MB/GB/TB = 10^3..10^12); "B" alone is bytes;
 * case-insensitive units; no whitespace inside; fractions allowed with units.
 * Pure functions, thread-safe.
 */
#ifndef VT_SIZE_H
#define VT_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parses s into *out (bytes, rounded to nearest). 0 on success; -1 for an empty,
 * malformed, negative or > 2^64-1 value (then *out is unchanged). */
int vt_size_parse(const char *s, uint64_t *out);

/* Formats bytes with binary units and up to one decimal ("3.0 MiB", "512 B")
 * into buf (cap >= 16 recommended); returns buf. */
char *vt_size_fmt(uint64_t bytes, char *buf, size_t cap);

/* Same for a signed quantity, with an explicit sign ("+3.0 MiB", "-64 KiB"). */
char *vt_size_fmt_signed(double bytes, char *buf, size_t cap);

#endif /* VT_SIZE_H */
