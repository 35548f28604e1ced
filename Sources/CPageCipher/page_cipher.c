/*
 * Page-encrypting SQLite VFS shim: see include/page_cipher.h and docs/projections.md.
 *
 * Written here rather than taken from SQLCipher because Debian's SQLCipher is 3.4.1 (SQLite 3.15
 * of 2016) and exports the sqlite3_* symbols itself, so it cannot sit beside the system SQLite
 * (docs/projections.md records the measurement). The shape follows SQLite's own shims
 * (ext/misc/cksumvfs.c): every method of the default VFS is wrapped, file methods work on blocks.
 */
#include "page_cipher.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char hv_magic[8] = {'H', 'V', 'P', 'A', 'G', 'E', 'S', 0};
static const unsigned char hv_personal[16] = {'h', 'v', 'p', 'a', 'g', 'e', 's', '-', 'f', 'i', 'l', 'e', '-', 'v', '1', 0};

typedef struct hv_vfs {
    sqlite3_vfs base;
    sqlite3_vfs *inner;
    unsigned char *key; /* sodium_malloc'd, 32 bytes */
    int block;
    char *name;
    long failures; /* blocks of a database that failed authentication */
} hv_vfs;

typedef struct hv_file {
    sqlite3_file base;
    sqlite3_file *inner; /* follows this struct in the same allocation */
    hv_vfs *vfs;
    unsigned char *file_key; /* sodium_malloc'd, 32 bytes; valid when has_header */
    unsigned char *plain;    /* sodium_malloc'd, one logical block */
    unsigned char *phys;     /* one physical block */
    unsigned char salt[16];
    int has_header;
    int header_bad;
    int is_db; /* a database: a block failing authentication is an error, not zeros */
    int block;
} hv_file;

#define HV_INNER_VFS(v) (((hv_vfs *)(v))->inner)

/* A database block (or header) that does not authenticate: counted, so that the caller can tell
 * damage from other I/O errors whatever code SQLite passes on. */
static int hv_damaged(hv_file *f) {
    f->vfs->failures++;
    return SQLITE_IOERR_DATA;
}
#define HV_BAD_BLOCK 1
#define HV_NO_BLOCK 2

static sqlite3_int64 hv_physical_block(const hv_file *f) { return (sqlite3_int64)f->block + HV_PAGE_BLOCK_OVERHEAD; }

static sqlite3_int64 hv_block_offset(const hv_file *f, sqlite3_int64 index) {
    return HV_PAGE_HEADER_SIZE + index * hv_physical_block(f);
}

static void hv_put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t hv_get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void hv_derive_file_key(hv_file *f) {
    crypto_generichash_blake2b_salt_personal(f->file_key, 32, NULL, 0, f->vfs->key, 32, f->salt, hv_personal);
}

/* Reads the header once; a file shorter than a header has none yet (a new file, or one whose
 * creation was cut short before anything in it was committed). */
static int hv_load_header(hv_file *f) {
    if (f->has_header || f->header_bad) return SQLITE_OK;
    sqlite3_int64 size = 0;
    int rc = f->inner->pMethods->xFileSize(f->inner, &size);
    if (rc != SQLITE_OK) return rc;
    if (size < HV_PAGE_HEADER_SIZE) return SQLITE_OK;
    unsigned char header[HV_PAGE_HEADER_SIZE];
    rc = f->inner->pMethods->xRead(f->inner, header, HV_PAGE_HEADER_SIZE, 0);
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_DATA : rc;
    if (memcmp(header, hv_magic, 8) != 0 || (header[8] | header[9] << 8) != HV_PAGE_FORMAT_VERSION ||
        hv_get32(header + 12) != (uint32_t)f->block) {
        f->header_bad = 1;
        return SQLITE_OK;
    }
    memcpy(f->salt, header + 16, 16);
    hv_derive_file_key(f);
    f->has_header = 1;
    return SQLITE_OK;
}

static int hv_write_header(hv_file *f) {
    unsigned char header[HV_PAGE_HEADER_SIZE];
    memset(header, 0, sizeof header);
    memcpy(header, hv_magic, 8);
    header[8] = HV_PAGE_FORMAT_VERSION & 0xff;
    header[9] = HV_PAGE_FORMAT_VERSION >> 8;
    hv_put32(header + 12, (uint32_t)f->block);
    randombytes_buf(f->salt, 16);
    memcpy(header + 16, f->salt, 16);
    int rc = f->inner->pMethods->xWrite(f->inner, header, HV_PAGE_HEADER_SIZE, 0);
    if (rc != SQLITE_OK) return rc;
    hv_derive_file_key(f);
    f->has_header = 1;
    f->header_bad = 0;
    return SQLITE_OK;
}

/* Whole blocks present (a torn last block counts: it fails authentication when read). */
static int hv_block_count(hv_file *f, sqlite3_int64 *count) {
    sqlite3_int64 size = 0;
    int rc = f->inner->pMethods->xFileSize(f->inner, &size);
    if (rc != SQLITE_OK) return rc;
    if (!f->has_header || size <= HV_PAGE_HEADER_SIZE) {
        *count = 0;
        return SQLITE_OK;
    }
    sqlite3_int64 pb = hv_physical_block(f);
    *count = (size - HV_PAGE_HEADER_SIZE + pb - 1) / pb;
    return SQLITE_OK;
}

static int hv_logical_size(hv_file *f, sqlite3_int64 *size) {
    sqlite3_int64 count = 0;
    int rc = hv_block_count(f, &count);
    if (rc != SQLITE_OK) return rc;
    if (count == 0) {
        *size = 0;
        return SQLITE_OK;
    }
    unsigned char length[4];
    uint32_t last = (uint32_t)f->block;
    rc = f->inner->pMethods->xRead(f->inner, length, 4, hv_block_offset(f, count - 1));
    if (rc == SQLITE_OK) {
        uint32_t stored = hv_get32(length);
        if (stored > 0 && stored <= (uint32_t)f->block) last = stored;
    } else if (rc != SQLITE_IOERR_SHORT_READ) {
        return rc;
    }
    *size = (count - 1) * f->block + last;
    return SQLITE_OK;
}

static void hv_associated_data(unsigned char ad[12], sqlite3_int64 index, uint32_t length) {
    for (int i = 0; i < 8; i++) ad[i] = (unsigned char)((uint64_t)index >> (8 * i));
    hv_put32(ad + 8, length);
}

/* Decrypts block `index` into f->plain (zero-padded past its length). HV_NO_BLOCK past the end,
 * HV_BAD_BLOCK when it does not authenticate. */
static int hv_read_block(hv_file *f, sqlite3_int64 index, sqlite3_int64 count, uint32_t *length) {
    if (index >= count) return HV_NO_BLOCK;
    int pb = (int)hv_physical_block(f);
    int rc = f->inner->pMethods->xRead(f->inner, f->phys, pb, hv_block_offset(f, index));
    if (rc == SQLITE_IOERR_SHORT_READ) return HV_BAD_BLOCK;
    if (rc != SQLITE_OK) return rc;
    uint32_t stored = hv_get32(f->phys);
    if (stored == 0 || stored > (uint32_t)f->block) return HV_BAD_BLOCK;
    unsigned char ad[12];
    hv_associated_data(ad, index, stored);
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(f->plain, NULL, NULL, f->phys + 28, (unsigned long long)f->block + 16, ad,
                                                   sizeof ad, f->phys + 4, f->file_key) != 0) {
        return HV_BAD_BLOCK;
    }
    *length = stored;
    return SQLITE_OK;
}

/* Encrypts f->plain as block `index` of logical length `length` under a fresh nonce. */
static int hv_write_block(hv_file *f, sqlite3_int64 index, uint32_t length) {
    if (length < (uint32_t)f->block) memset(f->plain + length, 0, (size_t)f->block - length);
    hv_put32(f->phys, length);
    randombytes_buf(f->phys + 4, 24);
    unsigned char ad[12];
    hv_associated_data(ad, index, length);
    crypto_aead_xchacha20poly1305_ietf_encrypt(f->phys + 28, NULL, f->plain, (unsigned long long)f->block, ad, sizeof ad, NULL,
                                               f->phys + 4, f->file_key);
    return f->inner->pMethods->xWrite(f->inner, f->phys, (int)hv_physical_block(f), hv_block_offset(f, index));
}

static int hv_close(sqlite3_file *file) {
    hv_file *f = (hv_file *)file;
    int rc = f->inner->pMethods ? f->inner->pMethods->xClose(f->inner) : SQLITE_OK;
    sodium_free(f->file_key);
    sodium_free(f->plain);
    free(f->phys);
    f->file_key = f->plain = f->phys = NULL;
    return rc;
}

static int hv_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    hv_file *f = (hv_file *)file;
    unsigned char *out = buffer;
    int rc = hv_load_header(f);
    if (rc != SQLITE_OK) return rc;
    if (f->header_bad && f->is_db) return hv_damaged(f);
    if (!f->has_header) {
        memset(out, 0, (size_t)amount);
        return SQLITE_IOERR_SHORT_READ;
    }
    sqlite3_int64 count = 0;
    rc = hv_block_count(f, &count);
    if (rc != SQLITE_OK) return rc;
    while (amount > 0) {
        sqlite3_int64 index = offset / f->block;
        int within = (int)(offset % f->block);
        int take = f->block - within < amount ? f->block - within : amount;
        uint32_t length = 0;
        rc = hv_read_block(f, index, count, &length);
        if (rc == HV_NO_BLOCK) {
            memset(out, 0, (size_t)amount);
            return SQLITE_IOERR_SHORT_READ;
        }
        if (rc == HV_BAD_BLOCK) {
            if (f->is_db) return hv_damaged(f);
            /* A journal's unreadable block was being written when a crash came: SQLite only
             * writes the database after the journal is synced, so it holds nothing needed. */
            memset(f->plain, 0, (size_t)f->block);
            length = (uint32_t)f->block;
        } else if (rc != SQLITE_OK) {
            return rc;
        }
        if (index < count - 1) length = (uint32_t)f->block;
        if ((uint32_t)(within + take) > length) {
            int available = (uint32_t)within < length ? (int)length - within : 0;
            memcpy(out, f->plain + within, (size_t)available);
            memset(out + available, 0, (size_t)(amount - available));
            return SQLITE_IOERR_SHORT_READ;
        }
        memcpy(out, f->plain + within, (size_t)take);
        out += take;
        amount -= take;
        offset += take;
    }
    return SQLITE_OK;
}

static int hv_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    hv_file *f = (hv_file *)file;
    const unsigned char *in = buffer;
    int rc = hv_load_header(f);
    if (rc != SQLITE_OK) return rc;
    if (f->header_bad) {
        if (f->is_db) return hv_damaged(f);
        if ((rc = f->inner->pMethods->xTruncate(f->inner, 0)) != SQLITE_OK) return rc;
    }
    if (!f->has_header && (rc = hv_write_header(f)) != SQLITE_OK) return rc;
    sqlite3_int64 size = 0, count = 0;
    if ((rc = hv_logical_size(f, &size)) != SQLITE_OK) return rc;
    if ((rc = hv_block_count(f, &count)) != SQLITE_OK) return rc;
    sqlite3_int64 end = offset + amount;
    sqlite3_int64 new_size = end > size ? end : size;
    sqlite3_int64 last_block = (new_size - 1) / f->block;
    /* Bytes between the old end and `offset` become zeros: start at the old end when it is before. */
    sqlite3_int64 from = offset < size ? offset : size;
    for (sqlite3_int64 index = from / f->block; index <= (end - 1) / f->block; index++) {
        sqlite3_int64 block_start = index * f->block;
        sqlite3_int64 write_from = offset > block_start ? offset : block_start;
        sqlite3_int64 write_to = end < block_start + f->block ? end : block_start + f->block;
        uint32_t length = 0;
        int whole = write_from == block_start && write_to == block_start + f->block;
        if (whole) {
            length = (uint32_t)f->block;
        } else {
            rc = hv_read_block(f, index, count, &length);
            if (rc == HV_NO_BLOCK || rc == HV_BAD_BLOCK) {
                if (rc == HV_BAD_BLOCK && f->is_db) return hv_damaged(f);
                memset(f->plain, 0, (size_t)f->block);
                length = 0;
            } else if (rc != SQLITE_OK) {
                return rc;
            }
            if (index < count - 1) length = (uint32_t)f->block;
        }
        if (write_to > write_from) memcpy(f->plain + (write_from - block_start), in + (write_from - offset), (size_t)(write_to - write_from));
        uint32_t reach = (uint32_t)(write_to - block_start);
        if (reach > length) length = reach;
        if (index < last_block) length = (uint32_t)f->block;
        if ((rc = hv_write_block(f, index, length)) != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int hv_truncate(sqlite3_file *file, sqlite3_int64 size) {
    hv_file *f = (hv_file *)file;
    int rc = hv_load_header(f);
    if (rc != SQLITE_OK) return rc;
    if (size == 0) {
        f->has_header = 0;
        f->header_bad = 0;
        return f->inner->pMethods->xTruncate(f->inner, 0);
    }
    if (!f->has_header) return SQLITE_OK;
    sqlite3_int64 current = 0, count = 0;
    if ((rc = hv_logical_size(f, &current)) != SQLITE_OK) return rc;
    if ((rc = hv_block_count(f, &count)) != SQLITE_OK) return rc;
    if (size >= current) return SQLITE_OK;
    sqlite3_int64 blocks = (size + f->block - 1) / f->block;
    uint32_t tail = (uint32_t)(size % f->block);
    if (tail != 0) {
        uint32_t length = 0;
        rc = hv_read_block(f, blocks - 1, count, &length);
        if (rc == HV_BAD_BLOCK || rc == HV_NO_BLOCK) {
            if (f->is_db) return hv_damaged(f);
            memset(f->plain, 0, (size_t)f->block);
        } else if (rc != SQLITE_OK) {
            return rc;
        }
        if ((rc = hv_write_block(f, blocks - 1, tail)) != SQLITE_OK) return rc;
    }
    return f->inner->pMethods->xTruncate(f->inner, hv_block_offset(f, blocks));
}

static int hv_sync(sqlite3_file *file, int flags) {
    hv_file *f = (hv_file *)file;
    return f->inner->pMethods->xSync(f->inner, flags);
}

static int hv_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    hv_file *f = (hv_file *)file;
    int rc = hv_load_header(f);
    if (rc != SQLITE_OK) return rc;
    if (f->header_bad) {
        if (f->is_db) return hv_damaged(f);
        *size = 0;
        return SQLITE_OK;
    }
    return hv_logical_size(f, size);
}

static int hv_lock(sqlite3_file *file, int level) {
    hv_file *f = (hv_file *)file;
    return f->inner->pMethods->xLock(f->inner, level);
}

static int hv_unlock(sqlite3_file *file, int level) {
    hv_file *f = (hv_file *)file;
    return f->inner->pMethods->xUnlock(f->inner, level);
}

static int hv_check_reserved_lock(sqlite3_file *file, int *reserved) {
    hv_file *f = (hv_file *)file;
    return f->inner->pMethods->xCheckReservedLock(f->inner, reserved);
}

static int hv_file_control(sqlite3_file *file, int op, void *arg) {
    hv_file *f = (hv_file *)file;
    switch (op) {
    case SQLITE_FCNTL_SIZE_HINT:
    case SQLITE_FCNTL_CHUNK_SIZE:
        /* Logical sizes mean nothing to the physical file; preallocation is only an optimisation. */
        return SQLITE_OK;
    case SQLITE_FCNTL_MMAP_SIZE:
        /* Memory-mapped reads would see ciphertext: never. */
        if (arg) *(sqlite3_int64 *)arg = 0;
        return SQLITE_OK;
    case SQLITE_FCNTL_VFSNAME:
        if (arg) *(char **)arg = sqlite3_mprintf("%s", f->vfs->name);
        return SQLITE_OK;
    default:
        return f->inner->pMethods->xFileControl(f->inner, op, arg);
    }
}

static int hv_sector_size(sqlite3_file *file) {
    /* One block: SQLite then never lets new journal content share a block with synced content,
     * so rewriting a block cannot damage what a crash must find. */
    return ((hv_file *)file)->block;
}

static int hv_device_characteristics(sqlite3_file *file) {
    (void)file;
    /* A write rewrites whole blocks: nothing is atomic or power-safe beyond what SQLite assumes
     * with none of these flags. */
    return 0;
}

static const sqlite3_io_methods hv_io_methods = {
    1, /* no shared memory (no WAL) and no memory mapping */
    hv_close, hv_read, hv_write, hv_truncate, hv_sync, hv_file_size, hv_lock, hv_unlock, hv_check_reserved_lock,
    hv_file_control, hv_sector_size, hv_device_characteristics,
};

static int hv_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    hv_vfs *v = (hv_vfs *)vfs;
    hv_file *f = (hv_file *)file;
    memset(f, 0, sizeof *f);
    f->inner = (sqlite3_file *)&f[1];
    f->vfs = v;
    f->block = v->block;
    f->is_db = (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_TEMP_DB)) != 0;
    if (name && (flags & SQLITE_OPEN_MAIN_DB) && (flags & SQLITE_OPEN_CREATE)) {
        /* Private from the start (0600); SQLite gives its journal the database's permissions. */
        int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) close(fd);
    }
    int rc = v->inner->xOpen(v->inner, name, f->inner, flags, out_flags);
    if (rc != SQLITE_OK) {
        f->base.pMethods = NULL;
        return rc;
    }
    f->file_key = sodium_malloc(32);
    f->plain = sodium_malloc((size_t)f->block);
    f->phys = malloc((size_t)f->block + HV_PAGE_BLOCK_OVERHEAD);
    if (!f->file_key || !f->plain || !f->phys) {
        f->inner->pMethods->xClose(f->inner);
        sodium_free(f->file_key);
        sodium_free(f->plain);
        free(f->phys);
        f->base.pMethods = NULL;
        return SQLITE_NOMEM;
    }
    f->base.pMethods = &hv_io_methods;
    return SQLITE_OK;
}

int hv_page_wipe_file(const char *path) {
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno == ENOENT ? 0 : errno;
    struct stat st;
    int result = 0;
    if (fstat(fd, &st) != 0) {
        result = errno;
    } else {
        static const unsigned char zeros[65536];
        off_t done = 0;
        while (done < st.st_size) {
            size_t chunk = st.st_size - done < (off_t)sizeof zeros ? (size_t)(st.st_size - done) : sizeof zeros;
            ssize_t wrote = pwrite(fd, zeros, chunk, done);
            if (wrote < 0) {
                if (errno == EINTR) continue;
                result = errno;
                break;
            }
            done += wrote;
        }
        if (result == 0 && fsync(fd) != 0) result = errno;
    }
    close(fd);
    return result;
}

static int hv_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    /* Journals hold earlier pages: zeroed before they go, as erasure needs (docs/threat-model.md). */
    if (hv_page_wipe_file(name) != 0) return SQLITE_IOERR_DELETE;
    return HV_INNER_VFS(vfs)->xDelete(HV_INNER_VFS(vfs), name, sync_dir);
}

static int hv_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    return HV_INNER_VFS(vfs)->xAccess(HV_INNER_VFS(vfs), name, flags, result);
}

static int hv_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    return HV_INNER_VFS(vfs)->xFullPathname(HV_INNER_VFS(vfs), name, size, out);
}

static void *hv_dl_open(sqlite3_vfs *vfs, const char *path) { return HV_INNER_VFS(vfs)->xDlOpen(HV_INNER_VFS(vfs), path); }

static void hv_dl_error(sqlite3_vfs *vfs, int size, char *out) { HV_INNER_VFS(vfs)->xDlError(HV_INNER_VFS(vfs), size, out); }

static void (*hv_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return HV_INNER_VFS(vfs)->xDlSym(HV_INNER_VFS(vfs), handle, symbol);
}

static void hv_dl_close(sqlite3_vfs *vfs, void *handle) { HV_INNER_VFS(vfs)->xDlClose(HV_INNER_VFS(vfs), handle); }

static int hv_randomness(sqlite3_vfs *vfs, int size, char *out) {
    return HV_INNER_VFS(vfs)->xRandomness(HV_INNER_VFS(vfs), size, out);
}

static int hv_sleep(sqlite3_vfs *vfs, int microseconds) { return HV_INNER_VFS(vfs)->xSleep(HV_INNER_VFS(vfs), microseconds); }

static int hv_current_time(sqlite3_vfs *vfs, double *now) { return HV_INNER_VFS(vfs)->xCurrentTime(HV_INNER_VFS(vfs), now); }

static int hv_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    return HV_INNER_VFS(vfs)->xGetLastError(HV_INNER_VFS(vfs), size, out);
}

static int hv_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    sqlite3_vfs *inner = HV_INNER_VFS(vfs);
    if (inner->iVersion >= 2 && inner->xCurrentTimeInt64) return inner->xCurrentTimeInt64(inner, now);
    double days = 0;
    int rc = inner->xCurrentTime(inner, &days);
    *now = (sqlite3_int64)(days * 86400000.0);
    return rc;
}

int hv_page_vfs_register(const char *name, const unsigned char *key, int block_size) {
    if (!name || !key || block_size < 512 || block_size > 65536 || (block_size & (block_size - 1)) != 0) return SQLITE_MISUSE;
    if (sodium_init() < 0) return SQLITE_ERROR;
    sqlite3_vfs *inner = sqlite3_vfs_find(NULL);
    if (!inner) return SQLITE_ERROR;
    hv_vfs *v = calloc(1, sizeof *v);
    if (!v) return SQLITE_NOMEM;
    v->key = sodium_malloc(32);
    v->name = strdup(name);
    if (!v->key || !v->name) {
        sodium_free(v->key);
        free(v->name);
        free(v);
        return SQLITE_NOMEM;
    }
    memcpy(v->key, key, 32);
    v->inner = inner;
    v->block = block_size;
    v->base.iVersion = 2;
    v->base.szOsFile = (int)sizeof(hv_file) + inner->szOsFile;
    v->base.mxPathname = inner->mxPathname;
    v->base.zName = v->name;
    v->base.pAppData = NULL;
    v->base.xOpen = hv_open;
    v->base.xDelete = hv_delete;
    v->base.xAccess = hv_access;
    v->base.xFullPathname = hv_full_pathname;
    v->base.xDlOpen = hv_dl_open;
    v->base.xDlError = hv_dl_error;
    v->base.xDlSym = hv_dl_sym;
    v->base.xDlClose = hv_dl_close;
    v->base.xRandomness = hv_randomness;
    v->base.xSleep = hv_sleep;
    v->base.xCurrentTime = hv_current_time;
    v->base.xGetLastError = hv_get_last_error;
    v->base.xCurrentTimeInt64 = hv_current_time_int64;
    int rc = sqlite3_vfs_register(&v->base, 0);
    if (rc != SQLITE_OK) {
        sodium_free(v->key);
        free(v->name);
        free(v);
    }
    return rc;
}

long hv_page_vfs_failures(const char *name) {
    sqlite3_vfs *found = sqlite3_vfs_find(name);
    if (!found || found->xOpen != hv_open) return 0;
    return ((hv_vfs *)found)->failures;
}

int hv_page_vfs_unregister(const char *name) {
    sqlite3_vfs *found = sqlite3_vfs_find(name);
    if (!found || found->xOpen != hv_open) return SQLITE_NOTFOUND;
    hv_vfs *v = (hv_vfs *)found;
    int rc = sqlite3_vfs_unregister(found);
    if (rc != SQLITE_OK) return rc;
    sodium_free(v->key); /* zeroes it */
    free(v->name);
    free(v);
    return SQLITE_OK;
}
