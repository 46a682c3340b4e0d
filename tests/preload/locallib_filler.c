/* locallib_filler.c — a library with some size and nothing else, loaded between an
 * unload and a reload of locallib so that the reload lands at another address
 * (prog_locallib FILLER). */
char locallib_filler_pad[1 << 20] = {1};
