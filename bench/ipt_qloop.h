/* ptflame bench: the query layer alone (ipt_bare -q, -Q), TNT bits and
 * TIPs in stream order, each answer and the time after it hashed
 * (e2e-decode-walk compares the two decoders' hashes). Included once per query decoder:
 * QLOOP names the function, and QDEC, QALLOC, QFREE, QSYNC, QSYNC_OFF,
 * QEVENT, QCOND, QIND and QTIME say how to use that decoder, so that
 * libipt's and ours run the same loop, each with its own calls (ours
 * inline where it is inline). */
static void QLOOP(const struct pt_config *base, const uint8_t *data, uint64_t size,
		  struct counts *c)
{
	struct pt_config cfg = *base;
	QDEC;
	uint64_t off, ip = 0, tsc;
	uint32_t lost_mtc, lost_cyc;
	int status, taken = 0;

	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + size;
	if (!QALLOC(&cfg)) {
		c->errors++;
		return;
	}
	status = QSYNC(&ip);
	if (status >= 0 && QSYNC_OFF(&off) >= 0)
		c->bytes += size - off;
	while (status != -pte_eos) {
		if (status < 0) {
			c->errors++;
			status = QSYNC(&ip);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = QEVENT(&ev);
			if (status < 0)
				break;
			c->hash = walk_hash(c->hash, ev.type, ev.has_tsc ? (int)ev.tsc : -1);
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		status = QCOND(&taken);
		if (status == -pte_bad_query)
			status = QIND(&ip);
		if (status >= 0)
			c->blocks++;
		if (QTIME(&tsc, &lost_mtc, &lost_cyc) < 0)
			tsc = 0;
		c->hash = walk_hash(c->hash, ip ^ tsc, taken ^ status);
	}
	QFREE();
}

#undef QLOOP
#undef QDEC
#undef QALLOC
#undef QFREE
#undef QSYNC
#undef QSYNC_OFF
#undef QEVENT
#undef QCOND
#undef QIND
#undef QTIME
