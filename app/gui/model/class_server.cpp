// Class mode's server: four routes over the ClassRoom, each checking the session code, and every
// other request answered 404 — no file is ever read, so no path can reach one. Every connection
// is served by libmicrohttpd's one epoll thread; the handlers only copy the room's state under its
// mutex, so none of them waits on the teacher's screen.
#include "gui/model/class_server.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

namespace attn {

// The student page, compiled in from assets/class/ (assets/CMakeLists.txt).
const char* embedded_class_page(const char* name);

namespace {

using nlohmann::json;

constexpr unsigned kBacklog = 512;  // connections waiting to be accepted: a whole class at once

// One answer to a request: its status, body and Content-Type.
struct Reply {
  int status = 200;
  std::string body;
  std::string type = "application/json";
};

Reply json_reply(int status, const json& j) {
  return {status, j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json"};
}

Reply error_reply(int status, const std::string& why) {
  return json_reply(status, {{"ok", false}, {"error", why}});
}

Reply text_reply(int status, const char* text) {
  return {status, text, "text/plain; charset=utf-8"};
}

// The code of a GET (?code=) or of an answer's body; an answer of 403 or 429 when it is refused.
std::optional<Reply> code_refused(ClassRoom& room, const std::string& code,
                                  const std::string& address) {
  switch (room.check_code(code, address)) {
    case CodeCheck::kOk:
      return std::nullopt;
    case CodeCheck::kWrong:
      return error_reply(403, "wrong session code");
    case CodeCheck::kLocked:
      return error_reply(429, "too many wrong codes from this device: wait a minute");
  }
  return std::nullopt;
}

// A string field of an answer: false when present but not a string.
bool string_field(const json& j, const char* key, std::string& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

Reply post_answer(ClassRoom& room, const std::string& body, const std::string& address) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return error_reply(400, "malformed JSON");
  std::string code, client, answer, name;
  if (!string_field(j, "code", code)) return error_reply(400, "\"code\" must be a string");
  if (auto refused = code_refused(room, code, address)) return *refused;
  if (!string_field(j, "client", client) || !string_field(j, "name", name))
    return error_reply(400, "\"client\" and \"name\" must be strings");
  const auto a = j.find("answer");
  if (a == j.end() || !(a->is_string() || a->is_number()))
    return error_reply(400, "\"answer\" must be a string");
  answer = a->is_string() ? a->get<std::string>() : a->dump();
  std::optional<int> step;
  if (const auto s = j.find("step"); s != j.end() && s->is_number_integer()) {
    const long long n = s->get<long long>();
    if (n >= 0 && n < 1000000) step = static_cast<int>(n);
  }
  const AnswerResult r = room.answer(client, answer, name, step);
  switch (r.status) {
    case AnswerStatus::kOk:
      return json_reply(200, {{"ok", true}});
    case AnswerStatus::kInvalid:
      return error_reply(400, r.error);
    case AnswerStatus::kRateLimited:
    case AnswerStatus::kFull:
      return error_reply(429, r.error);
  }
  return error_reply(500, "internal error");
}

std::string lookup(MHD_Connection* c, MHD_ValueKind kind, const char* key) {
  const char* v = MHD_lookup_connection_value(c, kind, key);
  return v ? v : "";
}

// The client's address ("192.168.1.20"), the key of the room's wrong-code lockout.
std::string remote_address(MHD_Connection* c) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const sockaddr* sa = info->client_addr;
  if (sa->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
  else if (sa->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
  return text;
}

// Queues `r` with the headers every answer carries: the page may run only its own inline script
// and load only from this server; nothing is cached (the state changes every step) and the code
// in the address is never sent elsewhere.
MHD_Result send(MHD_Connection* c, const Reply& r) {
  MHD_Response* res = MHD_create_response_from_buffer(
      r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
  if (!res) return MHD_NO;
  MHD_add_response_header(res, "Content-Type", r.type.c_str());
  MHD_add_response_header(res, "Cache-Control", "no-store");
  MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(res, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(res, "Content-Security-Policy",
                          "default-src 'none'; script-src 'unsafe-inline'; style-src "
                          "'unsafe-inline'; img-src 'self'; connect-src 'self'");
  const MHD_Result queued = MHD_queue_response(c, static_cast<unsigned>(r.status), res);
  MHD_destroy_response(res);
  return queued;
}

// The answer to a GET of one of the three pages, or to a request seen only by its headers that is
// refused before its body is read.
Reply answer_get(ClassRoom& room, MHD_Connection* c, const std::string& path) {
  if (path == "/") {
    const char* page = embedded_class_page("student.html");
    return {200, page ? page : "", "text/html; charset=utf-8"};
  }
  const std::string address = remote_address(c);
  if (auto refused = code_refused(room, lookup(c, MHD_GET_ARGUMENT_KIND, "code"), address))
    return *refused;
  if (path == "/api/state") {
    room.seen(lookup(c, MHD_GET_ARGUMENT_KIND, "client"));
    return {200, room.state_json(), "application/json"};
  }
  std::string svg = room.picture();
  if (svg.empty()) return error_reply(404, "this step has no picture");
  return {200, std::move(svg), "image/svg+xml"};
}

// Why an answer's body is refused before it is read, if it is. Only a plain body of declared
// length up to kClassMaxBody is read: a chunked body, one with no length or a compressed one (a
// few KB of brotli can inflate to gigabytes) never is.
std::optional<Reply> body_refused(MHD_Connection* c) {
  const char* length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
  if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding") || !length)
    return error_reply(411, "the body needs a Content-Length (at most 4 KB)");
  const std::string encoding = lookup(c, MHD_HEADER_KIND, "Content-Encoding");
  if (!encoding.empty() && encoding != "identity")
    return error_reply(415, "the body must not be compressed");
  char* end = nullptr;
  const unsigned long long n = std::strtoull(length, &end, 10);
  if (end == length || *end != '\0' || n > kClassMaxBody)
    return text_reply(413, "request body too large\n");
  return std::nullopt;
}

// The state of a GET between libmicrohttpd's first call and its second (no body to keep).
char get_pending;

// libmicrohttpd's request handler: called once with the headers (*state null), then once per
// piece of a body and once more at the request's end, where it is answered. A response queued at
// the first call would close the connection (libmicrohttpd cannot know the request was read
// whole), so only a request refused without reading its body is answered there; a phone's polls
// keep their connection.
MHD_Result handle(void* cls, MHD_Connection* c, const char* url, const char* method,
                  const char* /*version*/, const char* upload, size_t* upload_size, void** state) {
  ClassRoom& room = *static_cast<ClassRoom*>(cls);
  try {
    const std::string path = url ? url : "";
    const std::string m = method ? method : "";
    if (*state == nullptr) {
      const bool get = m == "GET" || m == "HEAD";
      if (get && (path == "/" || path == "/api/state" || path == "/step.svg")) {
        *state = &get_pending;
        return MHD_YES;
      }
      if (m != "POST" || path != "/api/answer") return send(c, text_reply(404, "not found\n"));
      if (auto refused = body_refused(c)) return send(c, *refused);
      *state = new std::string();
      return MHD_YES;
    }
    if (*state == &get_pending) {
      *upload_size = 0;  // a GET's body, if any, is not read
      return send(c, answer_get(room, c, path));
    }
    std::string& body = *static_cast<std::string*>(*state);
    if (*upload_size > 0) {
      // Content-Length was checked; libmicrohttpd delivers no more than it declares.
      if (body.size() + *upload_size <= kClassMaxBody) body.append(upload, *upload_size);
      *upload_size = 0;
      return MHD_YES;
    }
    return send(c, post_answer(room, body, remote_address(c)));
  } catch (...) {
    // Out of memory while answering: 500, and the server goes on.
    return send(c, text_reply(500, "internal error\n"));
  }
}

void request_done(void* /*cls*/, MHD_Connection* /*c*/, void** state,
                  MHD_RequestTerminationCode /*why*/) {
  if (*state != &get_pending) delete static_cast<std::string*>(*state);
  *state = nullptr;
}

// A connection is a file descriptor: let the process hold the server's limit of them (Linux's
// default soft limit of 1024 would stop accepting first), as far as the hard limit allows.
void allow_connections() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  const rlim_t want = kClassMaxConnections + 256;
  if (r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= want) return;
  r.rlim_cur = (r.rlim_max == RLIM_INFINITY || r.rlim_max >= want) ? want : r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
}

}  // namespace

ClassServer::ClassServer(ClassRoom& room) : room_(room) {}

ClassServer::~ClassServer() { stop(); }

std::string ClassServer::start(const std::string& bind, int port) {
  stop();
  if (port < 0 || port > 65535) return "the port must be 0 to 65535, not " + std::to_string(port);
  const std::string refused = "cannot listen on " + bind + ":" + std::to_string(port) +
                              ": the port is in use, or the address is not one of this computer's";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(bind.c_str(), nullptr, &hints, &found) != 0 || !found) return refused;
  sockaddr_in address{};
  std::memcpy(&address, found->ai_addr, sizeof address);
  freeaddrinfo(found);
  address.sin_port = htons(static_cast<uint16_t>(port));
  allow_connections();
  // One internal thread waits on epoll for every connection. libmicrohttpd sets SO_REUSEADDR
  // (class mode can restart at once) and never SO_REUSEPORT (no other program can share the port
  // and take some of the students' requests). Beyond the connection limit a new connection
  // waits in the listening queue; a connection silent for kClassIdleSeconds is closed; a request's
  // headers beyond kClassConnectionMemory are refused.
  server_ = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD, static_cast<uint16_t>(port), nullptr, nullptr, &handle, &room_,
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<const sockaddr*>(&address),
      MHD_OPTION_CONNECTION_LIMIT, kClassMaxConnections, MHD_OPTION_CONNECTION_TIMEOUT,
      kClassIdleSeconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT, kClassConnectionMemory,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, kBacklog, MHD_OPTION_NOTIFY_COMPLETED, &request_done, nullptr,
      MHD_OPTION_END);
  if (!server_) return refused;
  const MHD_DaemonInfo* info = MHD_get_daemon_info(server_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info ? info->port : port;
  return "";
}

void ClassServer::stop() {
  if (!server_) return;
  MHD_stop_daemon(server_);
  server_ = nullptr;
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
