/* cli_hints.c — the messages a newcomer meets first: a mistyped command
 * (which the service form `uprobestats CONFIG` would read as a config name)
 * and a config name found nowhere.  See cli.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/edit_distance.h"

/* The command nearest to word: one it starts, or one a typo or two away. */
static const char *nearest_command(const char *word, const char *const *names)
{
	size_t len = strlen(word), best_d = SIZE_MAX;
	const char *best = NULL;

	for (size_t i = 0; names[i]; i++) {
		size_t d = edit_distance(word, len, names[i], strlen(names[i]));
		if (names[i][0] == '-' || names[i][0] == '_')
			continue;
		if (len >= 2 && !strncmp(names[i], word, len))
			d = 0;
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best_d <= (len < 4 ? 1u : 2u) ? best : NULL;
}

/* A config the bare form would read: word itself, or the Android directory's. */
static bool config_exists(const char *word)
{
	char buf[4096];

	return access(word, F_OK) == 0 ||
	       (snprintf(buf, sizeof(buf), "%s%s", ANDROID_CONFIG_DIR, word) < (int)sizeof(buf) &&
		access(buf, F_OK) == 0);
}

int cli_unknown_command(const char *word, const char *const *names)
{
	const char *near;

	if (!word || word[0] == '-' || strchr(word, '/') || config_exists(word))
		return EXIT_OK;
	near = nearest_command(word, names);
	if (!near)
		return EXIT_OK;  /* a config name: its load says where it looked */
	p_err("unknown command '%s' (did you mean %s?), and no config file of that name "
	      "(tried ./%s and %s%s)", word, near, word, ANDROID_CONFIG_DIR, word);
	return EXIT_USAGE;
}

bool cli_config_missing(const char *arg, int code)
{
	if (code != -ENOENT || strchr(arg, '/'))
		return false;
	p_err("config %s: no such file (tried ./%s and %s%s)", arg, arg, ANDROID_CONFIG_DIR,
	      arg);
	return true;
}
