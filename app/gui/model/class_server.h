// Class mode's HTTP server (cpp-httplib on its own threads): the student page, the state, the
// picture and the answer endpoint of docs/cli.md's "Class mode", and nothing else.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gui/model/class_room.h"

namespace httplib {
class Server;
}

namespace attn {

// The largest request body accepted: an answer is a few hundred bytes (413 beyond).
inline constexpr size_t kClassMaxBody = 4096;

class ClassServer {
 public:
  // Serves `room`, which must outlive the server (or its stop()).
  explicit ClassServer(ClassRoom& room);
  ~ClassServer();  // stops: nothing listens once class mode is gone
  ClassServer(const ClassServer&) = delete;
  ClassServer& operator=(const ClassServer&) = delete;

  // Listens on bind:port (port 0: any free port, see port()) and serves on other threads until
  // stop(). "" when listening, else why not (the port is taken, the address is not this
  // computer's). A running server is stopped first.
  std::string start(const std::string& bind, int port);
  // Stops listening, finishes the requests under way and joins the threads; the port is free
  // when it returns.
  void stop();
  bool running() const { return server_ != nullptr; }
  int port() const { return port_; }

 private:
  ClassRoom& room_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// The page's address as the QR code and the teacher's screen give it, with the code in it so a
// student who scans it need not type the code: "http://HOST:PORT/?code=CODE".
std::string class_url(const std::string& host, int port, const std::string& code);
// This computer's IPv4 addresses other than loopback ("192.168.1.20"), for the address to show
// when the server listens on 0.0.0.0; empty when it has none.
std::vector<std::string> local_ipv4_addresses();

}  // namespace attn
