// smcpreload: an LD_PRELOAD library that makes a program's TCP sockets SMC
// sockets, as smc-tools' smc_run does (not packaged here): socket(AF_INET or
// AF_INET6, SOCK_STREAM, 0 or IPPROTO_TCP) becomes socket(AF_SMC, same type,
// SMCPROTO_SMC or SMCPROTO_SMC6). SMC then finds its peer with the TCP
// handshake's option and falls back to TCP where it cannot. The lab's
// bench-sockperf scenario runs sockperf under it, so that sockperf and
// smcping are compared on the same SMC-R path.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC 0  /* include/uapi/linux/smc.h: SMC over IPv4 */
#define SMCPROTO_SMC6 1 /* SMC over IPv6 */

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);
	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	if ((domain == AF_INET || domain == AF_INET6) && (type & 0xf) == SOCK_STREAM &&
	    (protocol == 0 || protocol == IPPROTO_TCP))
		return real(AF_SMC, type, domain == AF_INET ? SMCPROTO_SMC : SMCPROTO_SMC6);
	return real(domain, type, protocol);
}
