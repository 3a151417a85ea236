/* Test tool: import `perf script` text (stdin) with decoder/script_import and
 * print each branch event, one per line:
 *     TID KIND FROM TO REASON FUNC_FROM FUNC_TO AT
 * KIND: call ret jump on off lost; addresses 0x-hex; FUNC_*: the importer's
 * function names ('-' for address 0); AT: "entry" when TO is the start of
 * its function, else "mid". Exit 1 on import errors. */
#include <stdio.h>
#include <string.h>

#include "decoder/script_import.h"

static const char *kind_name(unsigned k)
{
	static const char *const n[] = { "?", "call", "ret", "jump", "on", "off", "lost" };

	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "?";
}

static const char *fname(struct dc_script *s, uint32_t pid, uint64_t ip)
{
	const char *n;

	if (!ip)
		return "-";
	n = dc_script_name(s, dc_script_func_key(s, pid, ip));
	return n ? n : "(null)";
}

int main(void)
{
	struct dc_script *s;
	struct dc_event ev;
	const char *comm;
	int rc;

	if (dc_script_new(&s, stdin))
		return 1;
	while ((rc = dc_script_next(s, &ev, &comm)) == 1) {
		printf("%u %s 0x%llx 0x%llx %u ", ev.tid, kind_name(ev.kind),
		       (unsigned long long)ev.from_ip, (unsigned long long)ev.to_ip, ev.reason);
		printf("%s ", fname(s, ev.pid, ev.from_ip));
		printf("%s %s\n", fname(s, ev.pid, ev.to_ip),
		       ev.to_ip && dc_script_func_start(s, ev.pid, ev.to_ip) == ev.to_ip ? "entry"
											   : "mid");
	}
	if (rc < 0)
		fprintf(stderr, "script_events: %s\n", dc_script_errmsg(s, rc));
	dc_script_free(s);
	return rc < 0;
}
