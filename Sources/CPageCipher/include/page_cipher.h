#ifndef HEALTHVAULT_PAGE_CIPHER_H
#define HEALTHVAULT_PAGE_CIPHER_H

/*
 * A SQLite VFS shim that encrypts every file SQLite writes through it (the database, its rollback
 * journal, temporary files) block by block with XChaCha20-Poly1305 (docs/projections.md,
 * "Page-encrypted read models").
 *
 * Physical file: a 64-byte header (magic "HVPAGES\0", version, block size, a random 16-byte salt),
 * then blocks of `4 + 24 + block + 16` bytes: the block's logical length (little-endian u32), a
 * random nonce, the ciphertext and its tag. A block's key is derived from the VFS key and the
 * file's salt; its associated data binds the block number and logical length, so blocks cannot be
 * moved or resized unseen. A database block that fails authentication reads as SQLITE_IOERR_DATA;
 * in a journal it reads as zeros (SQLite then ignores what it cannot check).
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of a physical file's header. */
#define HV_PAGE_HEADER_SIZE 64
/** Bytes a block adds to its logical size (length, nonce, tag). */
#define HV_PAGE_BLOCK_OVERHEAD 44
/** The format version the header carries. */
#define HV_PAGE_FORMAT_VERSION 1

/**
 * Registers a VFS named `name` (copied) over the default VFS, encrypting under a copy of the
 * 32-byte `key` kept in sodium_malloc'd memory. `block_size` is a power of two from 512 to 65536
 * (the database's page size). Returns SQLITE_OK or an SQLite error code.
 */
int hv_page_vfs_register(const char *name, const unsigned char *key, int block_size);

/** How many database blocks (or headers) read through the VFS `name` failed authentication. */
long hv_page_vfs_failures(const char *name);

/** Unregisters the VFS `name` and wipes its key; every connection using it must be closed. */
int hv_page_vfs_unregister(const char *name);

/**
 * Overwrites the whole file at `path` with zeros and syncs it (the VFS does so to every file it is
 * asked to delete, before the deletion). Returns 0 or an errno value; a missing file is 0.
 */
int hv_page_wipe_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
