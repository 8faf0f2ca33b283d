// SPDX-License-Identifier: MIT
/*
 * nbdkit-smartio-plugin: a shared NVMe as an NBD export, so that ordinary
 * tools (qemu-img, nbdcopy, nbd-client, qemu's -drive) read and write it.
 * Each NBD connection is one smartio-nvmeq client with a queue pair of its
 * own; the manager (smartio-nvmeq manage) must serve the device.
 *
 *   nbdkit smartio [dev=nvme0] [mount=/smartio] [manager=NODE] [depth=N]
 */
#define NBDKIT_API_VERSION 2
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nbdkit-plugin.h>

#include "nvmeq.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_SERIALIZE_REQUESTS

static const char *dev = "nvme0", *mount = "/smartio", *manager;
static unsigned depth = 8;
static struct sfiles sf;

static int smartio_config(const char *key, const char *value)
{
	uint32_t v;

	/* value lives only during this call: keep nbdkit's interned copy. */
	if (!strcmp(key, "dev"))
		dev = nbdkit_strdup_intern(value);
	else if (!strcmp(key, "mount"))
		mount = nbdkit_strdup_intern(value);
	else if (!strcmp(key, "manager"))
		manager = nbdkit_strdup_intern(value);
	else if (!strcmp(key, "depth")) {
		if (nbdkit_parse_uint32_t("depth", value, &v) == -1)
			return -1;
		if (!v || v > 63) {
			nbdkit_error("depth must be 1 to 63, not %u", v);
			return -1;
		}
		depth = v;
	} else {
		nbdkit_error("unknown parameter '%s'", key);
		return -1;
	}
	return dev && mount && (!strcmp(key, "manager") ? manager != NULL : 1)
	       ? 0 : -1;
}

static int smartio_config_complete(void)
{
	int err = sf_init(&sf, mount);

	if (err) {
		nbdkit_error("%s is not a /smartio mount: %s", mount,
			     strerror(-err));
		return -1;
	}
	return 0;
}

static void *smartio_open(int readonly)
{
	struct nvmeq_client *c = malloc(sizeof(*c));

	(void)readonly;
	if (!c) {
		nbdkit_error("out of memory");
		return NULL;
	}
	if (nvmeq_connect(c, &sf, dev, manager, depth)) {
		nbdkit_error("no queue pair of %s (see the message above)", dev);
		free(c);
		return NULL;
	}
	return c;
}

static void smartio_close(void *handle)
{
	nvmeq_disconnect(handle);
	free(handle);
}

static int64_t smartio_get_size(void *handle)
{
	return (int64_t)(((struct nvmeq_client *)handle)->blocks * NVMEQ_LBA);
}

static int smartio_block_size(void *handle, uint32_t *minimum,
			      uint32_t *preferred, uint32_t *maximum)
{
	(void)handle;
	*minimum = NVMEQ_LBA;
	*preferred = NVMEQ_PAGE;
	*maximum = 0xffffffff;
	return 0;
}

/* The whole blocks around [offset, offset + count), read into a copy. */
static uint8_t *read_around(struct nvmeq_client *c, uint32_t count,
			    uint64_t offset, uint64_t *lba, size_t *len)
{
	uint64_t end = offset + count;
	uint8_t *b;

	*lba = offset / NVMEQ_LBA;
	*len = (size_t)((end + NVMEQ_LBA - 1) / NVMEQ_LBA - *lba) * NVMEQ_LBA;
	b = malloc(*len);
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	if (nvmeq_read(c, b, *len, *lba)) {
		free(b);
		errno = EIO;
		return NULL;
	}
	return b;
}

static int aligned(uint32_t count, uint64_t offset)
{
	return !(count % NVMEQ_LBA) && !(offset % NVMEQ_LBA);
}

static int smartio_pread(void *handle, void *buf, uint32_t count,
			 uint64_t offset, uint32_t flags)
{
	struct nvmeq_client *c = handle;
	uint64_t lba;
	size_t len;
	uint8_t *b;

	(void)flags;
	if (aligned(count, offset)) {
		if (!nvmeq_read(c, buf, count, offset / NVMEQ_LBA))
			return 0;
		errno = EIO;
		return -1;
	}
	b = read_around(c, count, offset, &lba, &len);
	if (!b)
		return -1;
	memcpy(buf, b + offset % NVMEQ_LBA, count);
	free(b);
	return 0;
}

static int smartio_pwrite(void *handle, const void *buf, uint32_t count,
			  uint64_t offset, uint32_t flags)
{
	struct nvmeq_client *c = handle;
	uint64_t lba;
	size_t len;
	uint8_t *b;
	int err;

	if (aligned(count, offset)) {
		err = nvmeq_write(c, buf, count, offset / NVMEQ_LBA);
	} else {	/* read, modify, write the blocks around it */
		b = read_around(c, count, offset, &lba, &len);
		if (!b)
			return -1;
		memcpy(b + offset % NVMEQ_LBA, buf, count);
		err = nvmeq_write(c, b, len, lba);
		free(b);
	}
	if (!err && (flags & NBDKIT_FLAG_FUA))
		err = nvmeq_flush(c);
	if (err) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int smartio_flush(void *handle, uint32_t flags)
{
	(void)flags;
	if (nvmeq_flush(handle)) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int smartio_can_flush(void *handle)
{
	(void)handle;
	return 1;
}

static int smartio_can_fua(void *handle)
{
	(void)handle;
	return NBDKIT_FUA_NATIVE;
}

static struct nbdkit_plugin plugin = {
	.name = "smartio",
	.longname = "smartio shared NVMe (smartio-nvmeq)",
	.version = PACKAGE_VERSION,
	.description = "An NVMe of a smartio cluster, shared through "
		       "smartio-nvmeq: a queue pair per connection",
	.config = smartio_config,
	.config_complete = smartio_config_complete,
	.config_help = "dev=<DEV>        the device (default nvme0)\n"
		       "mount=<DIR>      the /smartio mount (default /smartio)\n"
		       "manager=<NODE>   the manager's node (default: found)\n"
		       "depth=<N>        commands in flight, 1-63 (default 8)",
	.magic_config_key = "dev",
	.open = smartio_open,
	.close = smartio_close,
	.get_size = smartio_get_size,
	.block_size = smartio_block_size,
	.pread = smartio_pread,
	.pwrite = smartio_pwrite,
	.flush = smartio_flush,
	.can_flush = smartio_can_flush,
	.can_fua = smartio_can_fua,
	.errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN(plugin)
