// Class mode's HTTP server (libmicrohttpd, one epoll thread for every connection): the student
// page, the state, the picture and the answer endpoint of docs/cli.md's "Class mode", and nothing
// else.
#pragma once

#include <string>
#include <vector>

#include "gui/model/class_room.h"

struct MHD_Daemon;

namespace attn {

// The largest request body accepted: an answer is a few hundred bytes (413 beyond).
inline constexpr size_t kClassMaxBody = 4096;
// Connections held at once (idle keep-alive ones included); one more waits in the listening
// socket's queue until one of them closes.
// A class of 60 phones with a few connections each is far under it; a file descriptor each.
inline constexpr unsigned kClassMaxConnections = 1000;
// Seconds a connection may stay silent before it is closed (an idle keep-alive, a stalled
// request); a phone polls every second or two, so only abandoned connections reach it.
inline constexpr unsigned kClassIdleSeconds = 15;
// Bytes of memory one connection may use for its request's headers and the response's buffer: a
// request line and headers beyond it are refused (a slow client cannot grow without bound).
inline constexpr size_t kClassConnectionMemory = 32 * 1024;

class ClassServer {
 public:
  // Serves `room`, which must outlive the server (or its stop()).
  explicit ClassServer(ClassRoom& room);
  ~ClassServer();  // stops: nothing listens once class mode is gone
  ClassServer(const ClassServer&) = delete;
  ClassServer& operator=(const ClassServer&) = delete;

  // Listens on bind:port (port 0: any free port, see port()) and serves from one epoll thread
  // until stop(): a connection costs a file descriptor and a little memory, never a thread, so
  // idle and slow connections cannot keep anyone else waiting. "" when listening, else why not (the
  // port is taken, the address is not this computer's). A running server is stopped first.
  std::string start(const std::string& bind, int port);
  // Stops listening, closes every connection and joins the server's thread; the port is free when
  // it returns.
  void stop();
  bool running() const { return server_ != nullptr; }
  int port() const { return port_; }

 private:
  ClassRoom& room_;
  MHD_Daemon* server_ = nullptr;
  int port_ = 0;
};

// The page's address as the QR code and the teacher's screen give it, with the code in it so a
// student who scans it need not type the code: "http://HOST:PORT/?code=CODE".
std::string class_url(const std::string& host, int port, const std::string& code);
// This computer's IPv4 addresses other than loopback ("192.168.1.20"), for the address to show
// when the server listens on 0.0.0.0; empty when it has none.
std::vector<std::string> local_ipv4_addresses();

}  // namespace attn
