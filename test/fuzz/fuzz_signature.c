/* fuzz_signature — both method-signature readers over arbitrary text: the
 * config's sig_parse (Java or native form, class split, primitive checks) and
 * the resolver's java_sig_parse (descriptors, class variants, pretty form),
 * plus java_type_to_descriptor on the same text and into a tiny buffer.
 * Seeds: method_signature values from the test configs (Java with arrays,
 * varargs, generics, inner classes; native symbols). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "config/signature.h"
#include "resolve/java_sig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void config_reader(const char *s)
{
	struct method_sig sig;
	const char *why = NULL;

	if (sig_parse(s, &sig, &why) != 0)
		return;
	struct span cls = sig_class(&sig);
	(void)cls;
	for (size_t i = 0; i < sig.n_params; i++) {
		sig_is_primitive(sig.params[i].p, sig.params[i].len);
		sig_is_floating(sig.params[i].p, sig.params[i].len);
	}
}

static void resolver_reader(const char *s)
{
	struct arena *a = arena_new();
	struct java_sig js;
	struct err err = { 0 };
	char small[8], big[512];

	if (!a)
		return;
	if (java_sig_parse(s, a, &js, &err) == 0) {
		for (unsigned k = 1; k < 8; k++)
			if (!java_sig_class_variant(&js, k, a))
				break;
		java_sig_pretty(&js, a);
		const char *params[2] = { js.name, js.class_name };
		java_sig_from_parts(js.class_name, js.name, params, 2, true, a, &js, &err);
	}
	java_type_to_descriptor(s, small, sizeof(small));
	java_type_to_descriptor(s, big, sizeof(big));
	arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	config_reader(s);
	resolver_reader(s);
	free(s);
	return 0;
}
