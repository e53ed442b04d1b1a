#include "report/output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "report/html.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/markdown.h"
#include "report/sarif.h"
#include "report/text.h"

namespace graphcheck {
namespace {

absl::Status ErrnoStatus(absl::string_view what, const std::string& path) {
  const int err = errno;
  std::string message = absl::StrCat("cannot ", what, " '", path, "': ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::StatusOr<ReportFormat> ParseReportFormat(absl::string_view name) {
  if (name == "text") return ReportFormat::kText;
  if (name == "json") return ReportFormat::kJson;
  if (name == "junit") return ReportFormat::kJunit;
  if (name == "sarif") return ReportFormat::kSarif;
  if (name == "markdown") return ReportFormat::kMarkdown;
  if (name == "html") return ReportFormat::kHtml;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format '", name, "' (expected text, json, junit, sarif, markdown or html)"));
}

std::string RenderReport(const Report& report, const RenderOptions& options) {
  switch (options.format) {
    case ReportFormat::kJson:
      return ReportToJson(report);
    case ReportFormat::kJunit:
      return RenderJunit(report, options.fail_on);
    case ReportFormat::kSarif:
      return RenderSarif(report, options.checks);
    case ReportFormat::kMarkdown:
      return RenderMarkdown(report);
    case ReportFormat::kHtml:
      return RenderHtml(report);
    case ReportFormat::kText:
      break;
  }
  TextOptions text;
  text.color = options.color;
  return RenderText(report, text);
}

absl::Status WriteOutput(const std::string& path, absl::string_view contents) {
  if (path.empty() || path == "-") {
    if (std::fwrite(contents.data(), 1, contents.size(), stdout) != contents.size() || std::fflush(stdout) != 0) {
      return ErrnoStatus("write", "<stdout>");
    }
    return absl::OkStatus();
  }
  // Devices and pipes (/dev/null, /dev/stdout, a FIFO) are written in place: renaming over them would replace them.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    std::FILE* target = std::fopen(path.c_str(), "wb");
    if (target == nullptr) return ErrnoStatus("open", path);
    const bool written = std::fwrite(contents.data(), 1, contents.size(), target) == contents.size();
    if (std::fclose(target) != 0 || !written) return ErrnoStatus("write", path);
    return absl::OkStatus();
  }
  const std::string temporary = absl::StrCat(path, ".tmp.", getpid());
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) return ErrnoStatus("create", path);
  const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    absl::Status status = ErrnoStatus("write", path);
    std::remove(temporary.c_str());
    return status;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    absl::Status status = ErrnoStatus("rename a temporary file onto", path);
    std::remove(temporary.c_str());
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return ErrnoStatus("open", path);
  if (S_ISDIR(info.st_mode)) return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus("open", path);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return ErrnoStatus("read", path);
  return contents.str();
}

}  // namespace graphcheck
