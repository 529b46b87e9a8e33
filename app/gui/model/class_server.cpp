// Class mode's server: four routes over the ClassRoom, each checking the session code, and every
// other request answered 404 — no file is ever read, so no path can reach one.
#include "gui/model/class_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

namespace attn {

// The student page, compiled in from assets/class/ (assets/CMakeLists.txt).
const char* embedded_class_page(const char* name);

namespace {

using nlohmann::json;

constexpr int kThreads = 16;   // requests served at once; polls take microseconds each
constexpr int kBacklog = 512;  // connections waiting to be served: a whole class at once

void send_json(httplib::Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& why) {
  send_json(res, status, {{"ok", false}, {"error", why}});
}

// The code of a GET (?code=) or of an answer's body; false after answering 403 or 429.
bool code_ok(ClassRoom& room, const std::string& code, const httplib::Request& req,
             httplib::Response& res) {
  switch (room.check_code(code, req.remote_addr)) {
    case CodeCheck::kOk:
      return true;
    case CodeCheck::kWrong:
      send_error(res, 403, "wrong session code");
      return false;
    case CodeCheck::kLocked:
      send_error(res, 429, "too many wrong codes from this device: wait a minute");
      return false;
  }
  return false;
}

// A string field of an answer: false when present but not a string.
bool string_field(const json& j, const char* key, std::string& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

void post_answer(ClassRoom& room, const httplib::Request& req, httplib::Response& res) {
  const json j = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return send_error(res, 400, "malformed JSON");
  std::string code, client, answer, name;
  if (!string_field(j, "code", code)) return send_error(res, 400, "\"code\" must be a string");
  if (!code_ok(room, code, req, res)) return;
  if (!string_field(j, "client", client) || !string_field(j, "name", name))
    return send_error(res, 400, "\"client\" and \"name\" must be strings");
  const auto a = j.find("answer");
  if (a == j.end() || !(a->is_string() || a->is_number()))
    return send_error(res, 400, "\"answer\" must be a string");
  answer = a->is_string() ? a->get<std::string>() : a->dump();
  std::optional<int> step;
  if (const auto s = j.find("step"); s != j.end() && s->is_number_integer()) {
    const long long n = s->get<long long>();
    if (n >= 0 && n < 1000000) step = static_cast<int>(n);
  }
  const AnswerResult r = room.answer(client, answer, name, step);
  switch (r.status) {
    case AnswerStatus::kOk:
      return send_json(res, 200, {{"ok", true}});
    case AnswerStatus::kInvalid:
      return send_error(res, 400, r.error);
    case AnswerStatus::kRateLimited:
    case AnswerStatus::kFull:
      return send_error(res, 429, r.error);
  }
}

}  // namespace

ClassServer::ClassServer(ClassRoom& room) : room_(room) {}

ClassServer::~ClassServer() { stop(); }

std::string ClassServer::start(const std::string& bind, int port) {
  stop();
  if (port < 0 || port > 65535) return "the port must be 0 to 65535, not " + std::to_string(port);
  auto s = std::make_unique<httplib::Server>();
  ClassRoom* const room = &room_;  // the handlers' only state; outlives the server
  // httplib's default adds SO_REUSEPORT, which would let a second program bind the same port and
  // take some of the students' requests; SO_REUSEADDR alone lets class mode restart at once. The
  // socket is kept to widen its backlog below.
  auto listening = std::make_shared<socket_t>(-1);
  s->set_socket_options([listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listening = sock;
  });
  s->set_payload_max_length(kClassMaxBody);
  // One request per connection: a polling page kept alive would hold a thread between polls.
  s->set_keep_alive_max_count(1);
  s->set_read_timeout(3);
  s->set_write_timeout(3);
  s->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  // The page may run only its own inline script and load only from this server; nothing is
  // cached (the state changes every step) and the code in the address is never sent elsewhere.
  s->set_default_headers({{"Cache-Control", "no-store"},
                          {"X-Content-Type-Options", "nosniff"},
                          {"Referrer-Policy", "no-referrer"},
                          {"Content-Security-Policy",
                           "default-src 'none'; script-src 'unsafe-inline'; style-src "
                           "'unsafe-inline'; img-src 'self'; connect-src 'self'"}});

  // Checked before httplib reads a body. Debian's httplib 0.11 limits only a body that declares
  // its Content-Length: a chunked body, one with no length (read to the end of the connection) or
  // a compressed one (a few KB of brotli can inflate to gigabytes) would be taken whole. An
  // answer is a short JSON text, so only a plain body of declared length is read. Other paths
  // are 404 here too, so their bodies are never read either.
  s->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    using Handled = httplib::Server::HandlerResponse;
    const bool get = req.method == "GET" || req.method == "HEAD";
    const bool route =
        (get && (req.path == "/" || req.path == "/api/state" || req.path == "/step.svg")) ||
        (req.method == "POST" && req.path == "/api/answer");
    if (!route) {
      res.status = 404;
      res.set_content("not found\n", "text/plain; charset=utf-8");
      return Handled::Handled;
    }
    if (req.method != "POST") return Handled::Unhandled;
    if (req.has_header("Transfer-Encoding") || !req.has_header("Content-Length")) {
      send_error(res, 411, "the body needs a Content-Length (at most 4 KB)");
      return Handled::Handled;
    }
    const std::string encoding = req.get_header_value("Content-Encoding");
    if (!encoding.empty() && encoding != "identity") {
      send_error(res, 415, "the body must not be compressed");
      return Handled::Handled;
    }
    return Handled::Unhandled;
  });
  // The routes (the check above lists the same four).
  s->Get("/", [](const httplib::Request&, httplib::Response& res) {
    const char* page = embedded_class_page("student.html");
    res.set_content(page ? page : "", "text/html; charset=utf-8");
  });
  s->Get("/api/state", [room](const httplib::Request& req, httplib::Response& res) {
    if (!code_ok(*room, req.get_param_value("code"), req, res)) return;
    room->seen(req.get_param_value("client"));
    res.set_content(room->state_json(), "application/json");
  });
  s->Get("/step.svg", [room](const httplib::Request& req, httplib::Response& res) {
    if (!code_ok(*room, req.get_param_value("code"), req, res)) return;
    const std::string svg = room->picture();
    if (svg.empty()) return send_error(res, 404, "this step has no picture");
    res.set_content(svg, "image/svg+xml");
  });
  s->Post("/api/answer", [room](const httplib::Request& req, httplib::Response& res) {
    post_answer(*room, req, res);
  });
  // Statuses httplib sets itself (404 for any other path or method, 413 for a large body) get a
  // word of explanation; the handlers' own errors already have theirs.
  s->set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        res.set_content(res.status == 413   ? "request body too large\n"
                        : res.status == 404 ? "not found\n"
                                            : "bad request\n",
                        "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      }));
  // A handler that throws (out of memory) answers 500; the server goes on.
  s->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("internal error\n", "text/plain; charset=utf-8");
  });

  const int bound =
      port == 0 ? s->bind_to_any_port(bind) : (s->bind_to_port(bind, port) ? port : -1);
  if (bound <= 0)
    return "cannot listen on " + bind + ":" + std::to_string(port) +
           ": the port is in use, or the address is not one of this computer's";
  // Debian's compiled httplib listens with a backlog of 5: a class joining at once would have its
  // connections dropped and retried a second later. Listening again only widens the queue.
  if (*listening >= 0) ::listen(*listening, kBacklog);
  port_ = bound;
  httplib::Server* raw = s.get();
  server_ = std::move(s);
  thread_ = std::thread([raw] { raw->listen_after_bind(); });
  // httplib's stop() does nothing until the listening loop has begun: wait for it, so a stop()
  // straight after start() cannot leave a thread that never ends.
  for (int i = 0; i < 2000 && !raw->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return "";
}

void ClassServer::stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
  port_ = 0;
}

std::string class_url(const std::string& host, int port, const std::string& code) {
  return "http://" + host + ":" + std::to_string(port) + "/?code=" + code;
}

std::vector<std::string> local_ipv4_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) out.push_back(text);
  }
  freeifaddrs(list);
  return out;
}

}  // namespace attn
