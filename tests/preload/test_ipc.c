/* test_ipc.c — the table of memory shared with other processes (preload/track/vt_ipc.h)
 * on its own: digests, the driver's reference counting of legacy opens, imports that
 * end with their record, VMM imports listed at their mapping, external memory buffers
 * ending with their object, exports one per digest. */
#include <string.h>

#include "vt_ipc.h"
#include "vt_test.h"

static uint64_t live_addr, live_addr2;   /* the addresses live() says the core still holds */
static int live(uint64_t addr) { return addr && (addr == live_addr || addr == live_addr2); }
static int vmm_state(uint64_t handle, uint64_t *va, uint32_t *maps)
{
    if (handle != 77)
        return 0;
    *va = 0x7000;
    *maps = 2;
    return 1;
}

int main(void)
{
    unsigned char h1[64], h2[64];
    memset(h1, 1, sizeof h1);
    memset(h2, 1, sizeof h2);
    h2[63] = 2;
    CHECK(vt_ipc_digest(h1, 64) == vt_ipc_digest(h1, 64));
    CHECK(vt_ipc_digest(h1, 64) != vt_ipc_digest(h2, 64));
    CHECK(vt_ipc_digest_file(1, 2) != vt_ipc_digest_file(2, 1));

    /* legacy: a second open counts, the last close ends it, a failed close gives back */
    uint64_t d = vt_ipc_digest(h1, 64);
    CHECK_EQ_INT(vt_ipc_import_open(0x1000, d, 4096, 1), 1);
    CHECK_EQ_INT(vt_ipc_import_open(0x1000, d, 4096, 1), 0);
    vt_ipc_import_row rows[8];
    live_addr = 0x1000;
    CHECK_EQ_U64(vt_ipc_imports_copy(rows, 8, live, vmm_state), 1);
    CHECK_EQ_U64(rows[0].opens, 2);
    CHECK_EQ_INT(vt_ipc_import_close_begin(0x1000), 1);
    vt_ipc_import_close_end(0x1000, 1);
    CHECK_EQ_INT(vt_ipc_import_close_begin(0x1000), 0);
    vt_ipc_import_close_end(0x1000, 0);          /* failed: the open is back */
    CHECK_EQ_INT(vt_ipc_import_close_begin(0x1000), 0);
    vt_ipc_import_close_end(0x1000, 1);          /* the last close */
    CHECK_EQ_INT(vt_ipc_import_close_begin(0x1000), -1);
    CHECK_EQ_U64(vt_ipc_imports_copy(rows, 8, live, vmm_state), 0);

    /* a pool pointer ends with its record; a legacy import whose record went too */
    CHECK_EQ_INT(vt_ipc_import_open(0x2000, 5, 100, 0), 1);
    CHECK_EQ_INT(vt_ipc_import_open(0x3000, 6, 200, 1), 1);
    live_addr = 0x2000;
    CHECK_EQ_U64(vt_ipc_imports_copy(rows, 8, live, vmm_state), 1);
    CHECK_EQ_U64(rows[0].addr, 0x2000);
    live_addr = 0;
    CHECK_EQ_U64(vt_ipc_imports_copy(rows, 8, live, vmm_state), 0);
    CHECK_EQ_INT(vt_ipc_import_close_begin(0x3000), -1);   /* forgotten */

    /* VMM: listed at its lowest mapping with its mappings as opens, while live */
    vt_ipc_import_vmm(77, 9, 2 << 20);
    vt_ipc_import_vmm(78, 10, 2 << 20);      /* not live: forgotten */
    CHECK_EQ_U64(vt_ipc_imports_copy(rows, 8, live, vmm_state), 1);
    CHECK_EQ_U64(rows[0].addr, 0x7000);
    CHECK_EQ_U64(rows[0].opens, 2);
    CHECK_EQ_U64(rows[0].digest, 9);

    /* external memory: buffers carry the object's digest and end with it */
    vt_ipc_ext_note(0xe1, 42);
    CHECK_EQ_INT(vt_ipc_import_ext(0x8000, 0xe1, 64), 1);
    CHECK_EQ_INT(vt_ipc_import_ext(0x9000, 0xe1, 32), 1);
    live_addr = 0x8000;
    live_addr2 = 0x9000;
    CHECK_EQ_U64(vt_ipc_imports_copy(rows, 8, live, NULL), 3);   /* VMM unknown: kept, unmapped */
    uint64_t addrs[4];
    CHECK_EQ_U64(vt_ipc_ext_destroy(0xe1, addrs, 4), 2);
    CHECK((addrs[0] == 0x8000 && addrs[1] == 0x9000) || (addrs[0] == 0x9000 && addrs[1] == 0x8000));
    CHECK_EQ_U64(vt_ipc_ext_destroy(0xe1, addrs, 4), 0);

    /* exports: one row per digest, moved to the latest address */
    vt_ipc_export_row ex[4];
    vt_ipc_export_note(0x100, 7);
    vt_ipc_export_note(0x200, 7);
    vt_ipc_export_note(0x300, 8);
    CHECK_EQ_U64(vt_ipc_exports_copy(ex, 4), 2);
    CHECK_EQ_U64(ex[0].addr, 0x200);
    vt_ipc_after_fork_child();
    CHECK_EQ_U64(vt_ipc_exports_copy(ex, 4), 0);
    TEST_DONE();
}
