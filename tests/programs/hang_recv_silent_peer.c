/* A rank blocked in recv() on a TCP connection whose peer is connected but
 * never sends (a bootstrap peer that went silent). Both ends live in this
 * process: the peer end is held open and never written. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static int wait_for_peer(int fd) {
  char buf[64];
  return (int)recv(fd, buf, sizeof buf, 0); /* blocks forever */
}

int main(void) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 1) != 0) return 1;
  socklen_t len = sizeof addr;
  getsockname(ls, (struct sockaddr *)&addr, &len);
  int peer = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(peer, (struct sockaddr *)&addr, sizeof addr) != 0) return 1;
  int conn = accept(ls, NULL, NULL);
  printf("ready port %d\n", ntohs(addr.sin_port));
  fflush(stdout);
  for (;;) {
    if (wait_for_peer(conn) <= 0) break;
  }
  close(peer);
  return 0;
}
