/* load.c — loading a config: reading the file, detecting its format and
 * handing it to the textproto parser or the protobuf decoder.  The one module
 * that knows both parsers; they know only the model (config/model.h). */
#include "config/load.h"

#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "common/mapfile.h"
#include "config/model.h"
#include "config/protobuf.h"
#include "config/textproto.h"

/* Config files are small (upstream's are < 2 KiB); this bounds a mistaken path. */
#define CONFIG_MAX_FILE_SIZE (16u << 20)

/* Text if every byte is printable ASCII, UTF-8 or whitespace and the first
 * non-blank byte can start a textproto ('#', a field name).  A binary
 * config starts with 0x0a (tasks, length-delimited) followed by a length
 * byte, and nearly always holds control bytes (tags 0x10-0x1a, short lengths). */
static enum config_format detect_format(const uint8_t *b, size_t n)
{
	size_t i = 0;
	bool nul = false;

	/* A NUL alone does not make a binary config: a textproto with a raw NUL
	 * in a string is read as text, and the lexer says where the NUL is. */
	for (size_t k = 0; k < n; k++) {
		uint8_t c = b[k];
		if (c == 0)
			nul = true;
		else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')
			return CONFIG_FORMAT_BINARY;
		if (c == 0x7f)
			return CONFIG_FORMAT_BINARY;
	}
	if (nul && (n == 0 || b[0] == 0x0a))
		return CONFIG_FORMAT_BINARY;  /* binary starts with tasks' tag, 0x0a */
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' ||
			 b[i] == '\f' || b[i] == '\v'))
		i++;
	if (i == n)
		return CONFIG_FORMAT_TEXT;
	if (b[i] == '#' || b[i] == '_' || (b[i] >= 'a' && b[i] <= 'z') ||
	    (b[i] >= 'A' && b[i] <= 'Z'))
		return CONFIG_FORMAT_TEXT;
	return CONFIG_FORMAT_BINARY;
}

static void err_append(struct err *e, const char *s)
{
	size_t used;

	if (!e)
		return;
	used = strlen(e->msg);
	if (used < sizeof(e->msg) - 1)
		snprintf(e->msg + used, sizeof(e->msg) - used, "%s", s);
}

int config_load_buffer(const char *name, const void *buf, size_t len,
		       const struct config_load_opts *opts,
		       struct uprobestats_config **out, struct err *err)
{
	static const struct config_load_opts defaults = { 0 };
	struct uprobestats_config *cfg;
	enum config_format fmt;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	cfg = model_new(name);
	if (!cfg)
		return err_set(err, -ENOMEM, "%s: out of memory", name ? name : "config");
	fmt = opts->format != CONFIG_FORMAT_AUTO ? opts->format : detect_format(buf, len);
	cfg->format = fmt;
	if (fmt == CONFIG_FORMAT_TEXT)
		rc = textproto_parse(cfg, buf, len, err);
	else
		rc = protobuf_decode(cfg, buf, len, opts->era, err);
	if (rc) {
		if (opts->format == CONFIG_FORMAT_AUTO && fmt == CONFIG_FORMAT_BINARY)
			err_append(err, " (the content does not look like textproto, so it was "
				   "read as binary protobuf)");
		config_free(cfg);
		return rc;
	}
	*out = cfg;
	return 0;
}

int config_load_file(const char *path, const struct config_load_opts *opts,
		     struct uprobestats_config **out, struct err *err)
{
	struct mapped_file f;
	int rc;

	*out = NULL;
	rc = mapfile_open(path, CONFIG_MAX_FILE_SIZE, MAPFILE_ALLOW_EMPTY | MAPFILE_NO_DEVICE,
			  &f, err);
	if (rc)
		return rc;
	rc = config_load_buffer(path, f.data, f.size, opts, out, err);
	mapfile_close(&f);
	return rc;
}
