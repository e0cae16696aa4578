// Reading Nsight Compute exports: the source page (per line and per SASS instruction), the raw page
// (launches) and how a run recorded them.
#include "analyzer/profile/profile.h"
#include "analyzer/profile/join_detail.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpuopt::profile {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180: quoted fields, doubled quotes, newlines inside quotes). ncu also prints
// ==WARNING== lines into the same stream; they come back as one-field rows.
namespace {
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
        else quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true, any = true;
    } else if (c == ',') {
      row.push_back(std::move(field)), field.clear(), any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) row.push_back(std::move(field));
      if (!row.empty()) rows.push_back(std::move(row));
      row.clear(), field.clear(), any = false;
    } else {
      field += c;
    }
  }
  if (any || !field.empty()) row.push_back(std::move(field));
  if (!row.empty()) rows.push_back(std::move(row));
  return rows;
}

// "1,024" -> 1024, "-" or "" -> def. ncu prints thousands separators in some pages.
double number(const std::string& s, double def = 0) {
  std::string t;
  for (char c : s)
    if (c != ',' && c != ' ') t += c;
  if (t.empty() || t == "-" || t == "N/A") return def;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  return end && *end == '\0' ? v : def;
}


// ncu's own messages (==WARNING==, ==ERROR==, ==PROF==) mixed into an export: taken out before the
// CSV is read (they contain commas and quotes).
std::string withoutMessages(const std::string& text, std::vector<std::string>* messages) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("==WARNING==", 0) == 0 || line.rfind("==ERROR==", 0) == 0 || line.rfind("==PROF==", 0) == 0) {
      if (messages) messages->push_back(line);
      continue;
    }
    out += line;
    out += '\n';
  }
  return out;
}

// "void k<(int)32, (bool)1>(float *)" and "void k<32, 1>(float *)" (the raw page's spelling) alike.
std::string normalizeFunction(std::string f) {
  static const std::regex cast(R"(\((unsigned |signed |long |short )*(int|long|char|bool|short|unsigned)\))");
  return std::regex_replace(f, cast, "");
}

// Bytes per lane of a memory instruction: ncu's "Access Size" (bits), else the opcode's suffix.
unsigned accessWidth(double bits, const std::string& sass) {
  if (bits > 0) return static_cast<unsigned>(bits / 8);
  static const std::regex op(R"((LD|ST|LDG|STG|LDS|STS|LDL|STL)(\.[A-Z0-9_]+)*)");
  std::smatch m;
  if (!std::regex_search(sass, m, op)) return 0;
  std::string o = m.str();
  if (o.find(".128") != std::string::npos) return 16;
  if (o.find(".64") != std::string::npos) return 8;
  if (o.find(".U16") != std::string::npos || o.find(".S16") != std::string::npos) return 2;
  if (o.find(".U8") != std::string::npos || o.find(".S8") != std::string::npos) return 1;
  return 4;
}

bool isNcuMessage(const std::vector<std::string>& row) {
  return row.size() == 1 && (row[0].rfind("==WARNING==", 0) == 0 || row[0].rfind("==ERROR==", 0) == 0 ||
                             row[0].rfind("==PROF==", 0) == 0);
}
}  // namespace

std::string detail::readFile(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
using detail::readFile;

std::string baseName(const std::string& function) {
  // Cut the parameter list: the first '(' outside template brackets.
  int depth = 0;
  size_t end = function.size();
  for (size_t i = 0; i < function.size(); ++i) {
    char c = function[i];
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (c == '(' && depth == 0) { end = i; break; }
  }
  std::string s = function.substr(0, end);
  // Drop template arguments.
  std::string out;
  depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (depth == 0) out += c;
  }
  // Return type and namespaces.
  if (auto sp = out.find_last_of(' '); sp != std::string::npos) out = out.substr(sp + 1);
  if (auto ns = out.rfind("::"); ns != std::string::npos) out = out.substr(ns + 2);
  return out;
}

bool importSourceCsv(const std::string& text, Profile& p, std::string& error) {
  std::vector<std::string> messages;
  auto rows = parseCsv(withoutMessages(text, &messages));
  for (const auto& m : messages) {
    p.warnings.push_back(m);
    if (m.find("No lineinfo available") != std::string::npos) p.noLineInfo = true;
  }
  std::map<std::string, size_t> col;
  std::string file, function;
  Kernel* k = nullptr;
  Line* line = nullptr;
  std::set<std::string> seen;  // instruction addresses of the current line (ncu repeats them)
  auto get = [&](const std::vector<std::string>& r, const char* name, double def = -1) {
    auto it = col.find(name);
    return it == col.end() || it->second >= r.size() ? def : number(r[it->second], def);
  };
  auto text_ = [&](const std::vector<std::string>& r, const char* name, size_t nth = 0) {
    // "Source" appears twice (CUDA text, then SASS text): nth picks.
    size_t found = 0;
    for (const auto& [n, i] : col)
      if (n == name && i < r.size() && found++ == nth) return r[i];
    return std::string();
  };
  size_t sourceCol2 = std::string::npos;
  unsigned lineRows = 0;
  for (const auto& r : rows) {
    if (isNcuMessage(r)) {
      p.warnings.push_back(r[0]);
      if (r[0].find("No lineinfo available") != std::string::npos) p.noLineInfo = true;
      continue;
    }
    if (r.size() == 2 && r[0] == "File Path") {
      file = r[1];
      continue;
    }
    if (r.size() == 2 && r[0] == "File Name") {  // --print-source cuda: the source text only
      file = r[1];
      continue;
    }
    if (r.size() == 2 && r[0] == "Function Name") {
      // A result's lines from several files come as consecutive blocks of one function, and every
      // profiled launch is a result of its own: all of a function's launches make one Kernel,
      // their counters summed per line and per instruction.
      auto it = std::find_if(p.kernels.begin(), p.kernels.end(), [&](const Kernel& x) { return x.function == r[1]; });
      if (it == p.kernels.end()) {
        p.kernels.push_back({});
        it = p.kernels.end() - 1;
        it->function = r[1];
        it->name = baseName(r[1]);
      }
      k = &*it;
      function = r[1];
      line = nullptr;
      continue;
    }
    if (!r.empty() && r[0] == "Line No") {
      col.clear();
      sourceCol2 = std::string::npos;
      for (size_t i = 0; i < r.size(); ++i) {
        if (r[i] == "Source" && col.count("Source")) sourceCol2 = i;
        else col.emplace(r[i], i);
      }
      continue;
    }
    if (col.empty()) continue;
    if (!k) {
      error = "source page without a \"Function Name\" row: not an export of `ncu --page source --csv "
              "--print-source cuda,sass`";
      return false;
    }
    if (!r.empty() && !r[0].empty()) {  // a CUDA source line
      unsigned n = static_cast<unsigned>(number(r[0]));
      auto it = std::find_if(k->lines.begin(), k->lines.end(), [&](const Line& x) { return x.line == n && x.file == file; });
      if (it == k->lines.end()) {
        k->lines.push_back({});
        it = k->lines.end() - 1;
        it->file = file;
        it->line = n;
        it->source = text_(r, "Source");
      }
      line = &*it;
      double samples = get(r, "Warp Stall Sampling (All Samples)", 0);
      line->executed += get(r, "Instructions Executed", 0);
      line->threadExecuted += get(r, "Thread Instructions Executed", 0);
      line->samples += samples;
      k->samples += samples;
      seen.clear();
      ++lineRows;
      continue;
    }
    if (!line || r.size() < 2) continue;  // SASS without a source line
    Instruction in;
    in.address = text_(r, "Address");
    if (!seen.insert(in.address).second) continue;  // ncu repeats some rows within a line
    if (sourceCol2 < r.size()) {
      in.sass = r[sourceCol2];
      in.sass.erase(0, in.sass.find_first_not_of(' '));
    }
    in.executed = get(r, "Instructions Executed", 0);
    in.threadExecuted = get(r, "Thread Instructions Executed", 0);
    in.predicatedOn = get(r, "Predicated-On Thread Instructions Executed", in.threadExecuted);
    in.samples = get(r, "Warp Stall Sampling (All Samples)", 0);
    in.space = text_(r, "Address Space");
    in.op = text_(r, "Access Operation");
    in.width = accessWidth(get(r, "Access Size", -1), in.sass);
    in.sharedWavefronts = get(r, "L1 Wavefronts Shared");
    in.sharedIdeal = get(r, "L1 Wavefronts Shared Ideal");
    in.sharedWays = get(r, "L1 Conflicts Shared N-Way");
    in.sectors = get(r, "L2 Theoretical Sectors Global");
    in.sectorsIdeal = get(r, "L2 Theoretical Sectors Global Ideal");
    auto same = std::find_if(line->instructions.begin(), line->instructions.end(),
                             [&](const Instruction& x) { return x.address == in.address; });
    if (same == line->instructions.end()) {
      line->instructions.push_back(std::move(in));
      continue;
    }
    // Another launch of the kernel: add its counts.
    auto add = [](double& to, double v) { to = to < 0 ? v : v < 0 ? to : to + v; };
    add(same->executed, in.executed);
    add(same->threadExecuted, in.threadExecuted);
    add(same->predicatedOn, in.predicatedOn);
    add(same->samples, in.samples);
    add(same->sharedWavefronts, in.sharedWavefronts);
    add(same->sharedIdeal, in.sharedIdeal);
    add(same->sectors, in.sectors);
    add(same->sectorsIdeal, in.sectorsIdeal);
    same->sharedWays = std::max(same->sharedWays, in.sharedWays);
  }
  if (!p.kernels.empty() && lineRows == 0 && !p.noLineInfo) {
    error = "the source page has kernels but no source lines";
    return false;
  }
  return true;
}

bool importRawCsv(const std::string& text, Profile& p, std::string& error) {
  auto rows = parseCsv(withoutMessages(text, nullptr));
  std::erase_if(rows, isNcuMessage);
  if (rows.size() < 2 || rows[0].empty() || rows[0][0] != "ID") {
    error = "not an export of `ncu --page raw --csv` (no \"ID\" header)";
    return false;
  }
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rows[0].size(); ++i) col.emplace(rows[0][i], i);
  auto need = [&](const char* n) { return col.count(n) ? col[n] : std::string::npos; };
  size_t name = need("Kernel Name"), block = need("Block Size"), grid = need("Grid Size"),
         dur = need("gpu__time_duration.sum"), dev = need("device__attribute_display_name");
  if (name == std::string::npos) {
    error = "raw page without a \"Kernel Name\" column";
    return false;
  }
  // Row 1 holds the units ("us", "ns", "msecond", ...).
  double scale = 1.0;
  if (dur != std::string::npos && dur < rows[1].size()) {
    const std::string& u = rows[1][dur];
    scale = (u == "ns" || u == "nsecond") ? 1e-3 : (u == "ms" || u == "msecond") ? 1e3 : (u == "s" || u == "second") ? 1e6 : 1.0;
  }
  for (size_t i = 2; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (name >= r.size()) continue;
    std::string fn = r[name];
    std::string norm = normalizeFunction(fn);
    auto it = std::find_if(p.kernels.begin(), p.kernels.end(),
                           [&](const Kernel& k) { return k.function == fn || normalizeFunction(k.function) == norm; });
    if (it == p.kernels.end()) {
      p.kernels.push_back({});
      it = p.kernels.end() - 1;
      it->function = fn;
      it->name = baseName(fn);
    }
    ++it->launches;
    ++p.launches;
    // "(32, 8, 1)" -> {32, 8, 1}; n = 0 when absent.
    auto dims = [&](size_t c, unsigned& n) {
      std::array<unsigned, 3> b{1, 1, 1};
      n = 0;
      if (c == std::string::npos || c >= r.size()) return b;
      std::string digits;
      for (char ch : r[c] + ",") {
        if (std::isdigit(static_cast<unsigned char>(ch))) digits += ch;
        else if ((ch == ',' || ch == ')') && !digits.empty() && n < 3) b[n++] = static_cast<unsigned>(std::stoul(digits)), digits.clear();
      }
      return b;
    };
    unsigned nb = 0, ng = 0;
    std::array<unsigned, 3> b = dims(block, nb), g = dims(grid, ng);
    if (nb > 0) {
      if (std::find(it->blocks.begin(), it->blocks.end(), b) == it->blocks.end()) it->blocks.push_back(b);
      Launch l{b, ng > 0 ? g : std::array<unsigned, 3>{0, 0, 0}};
      if (std::find(it->shapes.begin(), it->shapes.end(), l) == it->shapes.end()) it->shapes.push_back(l);
    }
    if (dur != std::string::npos && dur < r.size()) {
      double d = number(r[dur], -1);
      if (d >= 0) it->durationUs = std::max(0.0, it->durationUs) + d * scale;
    }
    if (dev != std::string::npos && dev < r.size() && p.device.empty()) p.device = r[dev];
  }
  return true;
}

int importExport(const std::string& path, Profile& p, std::string& error) {
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const char* n : {"source.csv", "raw.csv"})
      if (fs::exists(fs::path(path) / n, ec)) files.push_back((fs::path(path) / n).string());
    // How it was recorded, when the recording said (runNcu, scripts/gpu-profile-programs.sh).
    bool ok = false;
    std::string rec = readFile((fs::path(path) / kRecordFile).string(), ok);
    if (ok) {
      auto j = nlohmann::json::parse(rec, nullptr, false);
      if (j.is_object()) {
        p.launchLimit = j.value("launchCount", 0u);
        p.kernelFilter = j.value("kernelFilter", std::string());
      }
    }
    if (files.empty()) {
      error = path + ": no source.csv or raw.csv in this folder (write them with `ncu -i REPORT --page source --csv "
                     "--print-source cuda,sass > source.csv` and `ncu -i REPORT --page raw --csv > raw.csv`)";
      return 2;
    }
  } else if (fs::exists(path, ec)) {
    files.push_back(path);
  } else {
    error = path + ": no such file or folder";
    return 2;
  }
  bool sawSource = false;
  for (const auto& f : files) {
    bool ok = false;
    std::string text = readFile(f, ok);
    if (!ok) {
      error = f + ": cannot be read";
      return 2;
    }
    // Which page: the raw page starts with "ID", the source page with "File Path" (or warnings).
    auto firstRows = parseCsv(withoutMessages(text.substr(0, std::min<size_t>(text.size(), 4096)), nullptr));
    std::erase_if(firstRows, isNcuMessage);
    std::string err;
    bool isRaw = !firstRows.empty() && !firstRows[0].empty() && firstRows[0][0] == "ID";
    if (isRaw ? !importRawCsv(text, p, err) : !importSourceCsv(text, p, err)) {
      error = f + ": " + err;
      return 2;
    }
    if (!isRaw) {
      sawSource = true;
      if (firstRows.empty() && !p.noLineInfo && p.warnings.empty()) {
        error = f + ": empty, or not an Nsight Compute CSV export";
        return 2;
      }
    }
  }
  bool anyLines = std::any_of(p.kernels.begin(), p.kernels.end(), [](const Kernel& k) { return !k.lines.empty(); });
  if (sawSource && p.noLineInfo && !anyLines) {
    error = "the profiled program has no line information: rebuild it with nvcc -lineinfo (keeps optimisation; "
            "add it to CMAKE_CUDA_FLAGS or your nvcc command line) and profile again";
    return kNoLineInfo;
  }
  if (p.kernels.empty()) {
    error = "the profile holds no kernel: the program launched none, or no launch matched the kernel filter";
    return kNoKernels;
  }
  if (!sawSource) {
    error = "only the raw page was given: per-line counters need the source page (source.csv)";
    return 2;
  }
  return 0;
}

std::map<std::string, std::vector<std::array<unsigned, 3>>> blockShapes(const Profile& p) {
  std::map<std::string, std::vector<std::array<unsigned, 3>>> out;
  for (const auto& k : p.kernels)
    for (const auto& b : k.blocks) {
      auto& v = out[k.name];
      if (std::find(v.begin(), v.end(), b) == v.end()) v.push_back(b);
    }
  return out;
}

std::map<std::string, std::vector<std::array<unsigned, 3>>> gridShapes(const Profile& p) {
  auto blocks = blockShapes(p);
  std::map<std::string, std::vector<std::array<unsigned, 3>>> out;
  for (const auto& [name, bs] : blocks) {
    auto& v = out[name];
    for (const auto& b : bs) {
      // The grid of every launch of this kernel with this block, if they agree.
      std::optional<std::array<unsigned, 3>> grid;
      bool same = true;
      for (const auto& k : p.kernels)
        if (k.name == name)
          for (const auto& l : k.shapes)
            if (l.block == b) {
              if (!grid) grid = l.grid;
              else if (*grid != l.grid) same = false;
            }
      v.push_back(grid && same ? *grid : std::array<unsigned, 3>{0, 0, 0});
    }
  }
  return out;
}

}  // namespace gpuopt::profile
