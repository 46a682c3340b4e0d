/* vt_html_assets.h — the HTML report's own scripts and styles, compiled in.
 *
 * The files under analyzer/report/html/ (listed in analyzer/CMakeLists.txt,
 * VT_HTML_ASSETS) are turned into vt_html_assets.c at build time by
 * html/embed.cmake: each file's bytes and its SHA-256 (hex). The page writes each
 * script as its own inline <script> element and each style sheet as an inline <style>,
 * byte for byte, and its content security policy allows exactly those hashes (CSP
 * Level 2 hash sources): no other script or style can run in the page.
 * Read-only, static storage; safe from any thread.
 */
#ifndef VT_HTML_ASSETS_H
#define VT_HTML_ASSETS_H

#include <stddef.h>

enum { VT_ASSET_SCRIPT, VT_ASSET_STYLE };

typedef struct vt_html_asset {
    const char *name;            /* file name under analyzer/report/html/ */
    int type;                    /* VT_ASSET_SCRIPT or VT_ASSET_STYLE */
    const unsigned char *bytes;  /* the file's bytes, NUL-terminated (the NUL not counted) */
    size_t len;                  /* bytes */
    const char *sha256_hex;      /* 64 lower-case hex digits of SHA-256(bytes[0..len)) */
} vt_html_asset;

extern const vt_html_asset vt_html_assets[];
extern const unsigned vt_html_nassets;

#endif /* VT_HTML_ASSETS_H */
