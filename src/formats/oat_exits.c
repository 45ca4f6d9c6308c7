#include "formats/oat_exits.h"

#include <errno.h>
#include <string.h>

static int exits_for(const struct oat_file *o, const struct oat_code *c,
		     struct oat_method_exits *out, struct err *err)
{
	uint64_t len;
	const uint8_t *b = oat_region(o, &len);
	enum code_arch arch;
	uint32_t pro;
	int rc;

	if (out->frame_rc)
		return err_set(err, out->frame_rc, "no exit sites without the frame: %s",
			       out->frame_err.msg);
	if ((rc = oat_code_arch(o, &arch, err)))
		return rc;
	if ((uint64_t)c->code_offset + c->code_size > len)
		return err_set(err, -EINVAL, "%s: code at 0x%x (%u bytes) runs past the oat data",
			       oat_name(o), c->code_offset, c->code_size);
	b += c->code_offset;
	if ((rc = exit_sites_prologue_frame(arch, b, c->code_size, &pro, err)))
		return rc;
	if (pro != out->frame.frame_size)
		return err_set(err, -EINVAL, "the prologue allocates a %u-byte frame but CodeInfo "
			       "says %u", pro, out->frame.frame_size);
	return exit_sites_find_art(arch, b, c->code_size, out->frame.frame_size, &out->sites,
				   err);
}

void oat_method_exits_get(const struct oat_file *o, const struct oat_code *c,
			  struct oat_method_exits *out)
{
	memset(out, 0, sizeof(*out));
	out->code_file_offset = c->file_offset;
	out->frame_rc = oat_code_frame_info(o, c, &out->frame, NULL, NULL, &out->frame_err);
	out->exits_rc = exits_for(o, c, out, &out->exits_err);
}

void oat_method_exits_free(struct oat_method_exits *m)
{
	if (m)
		exit_sites_free(&m->sites);
}

int oat_method_exits_in(const struct oat_file *o, uint64_t file_offset,
			struct oat_method_exits *out, struct err *err)
{
	uint64_t base = oat_info(o)->oatdata_off;
	struct oat_code c;
	int rc;

	memset(out, 0, sizeof(*out));
	if (file_offset < base || file_offset - base > UINT32_MAX)
		rc = err_set(err, -EINVAL, "%s: file offset 0x%llx is not inside the oat data",
			     oat_name(o), (unsigned long long)file_offset);
	else
		rc = oat_code_at(o, (uint32_t)(file_offset - base), &c, err);
	if (!rc && c.file_offset != file_offset)
		rc = err_set(err, -EINVAL, "%s: file offset 0x%llx maps to code at 0x%llx",
			     oat_name(o), (unsigned long long)file_offset,
			     (unsigned long long)c.file_offset);
	if (!rc)
		oat_method_exits_get(o, &c, out);
	return rc;
}

