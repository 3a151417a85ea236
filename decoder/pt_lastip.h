/* ptflame - decoder/pt_lastip.h: the last IP of Intel PT's IP compression
 * (internal to decoder/; also used by bench/ipt_walk.c). */
#ifndef PTFLAME_PT_LASTIP_H
#define PTFLAME_PT_LASTIP_H

#include <stdint.h>

#include <intel-pt.h>

/* The last IP after an IP packet (TIP, TIP.PGE, TIP.PGD, FUP) p of any
 * compression, from the one the packets before it left (SDM vol. 3,
 * "IP Compression"); a suppressed IP leaves it as it was. */
static inline void dc_pt_last_ip(uint64_t *last_ip, const struct pt_packet *p)
{
	uint64_t ip = p->payload.ip.ip;

	switch (p->payload.ip.ipc) {
	case pt_ipc_update_16:
		*last_ip = (*last_ip & ~UINT64_C(0xffff)) | (ip & 0xffff);
		break;
	case pt_ipc_update_32:
		*last_ip = (*last_ip & ~UINT64_C(0xffffffff)) | (ip & 0xffffffff);
		break;
	case pt_ipc_update_48:
		*last_ip = (*last_ip & ~UINT64_C(0xffffffffffff)) | (ip & UINT64_C(0xffffffffffff));
		break;
	case pt_ipc_sext_48:
		*last_ip = (uint64_t)((int64_t)(ip << 16) >> 16);
		break;
	case pt_ipc_full:
		*last_ip = ip;
		break;
	default:
		break;
	}
}

#endif
