/* vt_reader.h — streams snapshot files (docs/snapshot-format.md) into a vt_runset.
 *
 * Reads files and folders (a folder's `*.jsonl` and rotated `*.jsonl.N` files,
 * sorted by name, then its sub-folders down to VT_DIR_DEPTH; symbolic links inside
 * a folder never followed), one process per file, line by line with a bounded line buffer
 * (VT_MAX_LINE); each line is parsed with jansson (vt_jline.h) into a tree that
 * is folded into the model and freed before the next line, so memory grows with
 * distinct sites and steps, not with records. A jansson tree takes about 6-13
 * times its line's bytes (measured: 950 KB for a 76 KB snapshot of 500 sites),
 * so the line limit also bounds the reader's peak memory (~1.6 GB at worst).
 *
 * Errors (exit status 2 for the command): the first problem of a file named
 * explicitly stops the load with rs->err = "FILE:LINE: what"; inside a folder the
 * same problem is one note on stderr ("FILE:LINE: what (file skipped)"), the file
 * is skipped and the rest read, and the folder is an error only when no file of it
 * could be read. The problems: unreadable, not a regular file, a symbolic link
 * inside a folder, empty when named explicitly (inside a folder, a file with no
 * complete record is skipped with a warning, see vt_load_file), not JSON, a
 * foreign format, an unsupported version, a wrong type, a negative number or one
 * above 2^63-1, a duplicate key, nesting deeper than 2048 (jansson's limit), a
 * line over VT_MAX_LINE, a stack, module or (version 3) site used before it is
 * defined, a step that goes backwards, a device id outside
 * VT_DEVICE_MIN..VT_DEVICE_MAX, a folder without any complete snapshot record, a
 * malformed Python frame of a stack's "py" list ([file, function, line,
 * native_index], native_index -1 or a frame index), a malformed annotation (key
 * rule, non-number value, more than VT_MAX_ANNOT keys). The snapshot's "host"
 * object is read leniently (vt_hostsig.h) and never fails a load. A final line
 * without '\n' is a torn write and is ignored (vt_process.torn_tail; noted on
 * stderr); so is a compressed file's incomplete last zstd frame or gzip member (the
 * records before it are read). A first record of ours other than a header (the stream's tail: a copy,
 * or what logrotate's copytruncate left) is "no header: ...". A rotated copy
 * (*.jsonl.N) read from a folder is a process of its own, noted: the preload never
 * rotates its stream, so it is an outside copy or a renamed whole stream.
 * Two files of the same process (host, pid, start_ns): the fuller one is kept
 * (an exit record, else more snapshots; the first read on a tie), the other is
 * skipped with a note on stderr.
 * Format versions VT_FORMAT_VERSION_MIN..VT_FORMAT_VERSION (1 to 4) are read
 * (docs/snapshot-format.md); all version compatibility is in read/vt_decode*.c
 * (vt_decode.h). Versions 2 and 3 add the errors: a site row that is not
 * [stack, kind, device, 8 non-negative integers] (version 2) or [site id, 8
 * non-negative integers] (version 3; 1 to 9 columns of differences in a delta
 * record) ("sites[i][k] (column): what"), a site listed twice in one snapshot, a
 * "sites_delta" that is not a boolean or comes with no snapshot before it, a
 * difference that takes a value below 0 or above 2^63-1, a "site" record that
 * redefines an id differently. A delta record is completed from the previous
 * snapshot before it is applied, so every version of the same program loads into
 * the same model.
 * Threads: with rs->read_threads > 0 each file's lines are parsed by that many
 * worker threads (vt_lineparse.h) and decoded and folded in order by the calling
 * thread (same model, same first error); one loader per runset at a time.
 */
#ifndef VT_READER_H
#define VT_READER_H

#include "vt_model.h"

/* How deep a named folder is searched: its files, its sub-folders' (the run-*
 * folders `vramtrace run` makes), and theirs; deeper folders are noted, not read. */
#define VT_DIR_DEPTH 2
#define VT_MAX_LINE (128u << 20)   /* bytes; longer lines are rejected before parsing */
/* Longest string of a text field (header exe, host, cmdline arguments, module
 * paths, function and file names): any string a line can carry. The preload
 * writes paths and arguments of any length, and escapes non-UTF-8 bytes as
 * \u00XX, which read back as two bytes each; memory stays bounded because the
 * line is (each field is a copy of part of one line). */
#define VT_MAX_FIELD ((size_t)VT_MAX_LINE)

/* Loads every path (file or folder) into rs, appending processes in order.
 * 0 on success; -1 with rs->err set. rs must be zeroed (or previously loaded). */
int vt_load_paths(vt_runset *rs, char *const *paths, int npaths);

/* Loads one snapshot file given by its path (followed if a symlink when
 * explicit). in_dir: refuse symlinks (the file came from a folder listing).
 * 0 on success (or a second file of a loaded process, skipped); -1 with rs->err
 * set; 1 only with in_dir, when the file holds no complete record (empty, or
 * only a torn first line: a process that died before its first record): it is
 * skipped with "vramtrace: FILE: no complete record (skipped)" on stderr.
 * Without in_dir such a file is an error ("empty file"). */
int vt_load_file(vt_runset *rs, const char *path, int in_dir);

/* A snapshot file's name (no folder): "*.jsonl", "*.jsonl.zst" or "*.jsonl.gz" (1),
 * a rotated copy "*.jsonl.N" with N decimal digits, also with ".zst" or ".gz" after
 * it (2); hidden names (a leading '.') and anything else 0. The content decides how a
 * file is decoded (zstd and gzip by their magic bytes), not the name. */
int vt_snapshot_name(const char *name);

#endif /* VT_READER_H */
