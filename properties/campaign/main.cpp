// ssmv-campaign — property campaigns over MPI ranks (or forked jobs without MPI): every rank
// runs its share of the fixed units of the plan (plan.h), writes each unit's result as it
// finishes and rewrites the report; rank 0 gathers the results and writes the final report.
// docs/campaigns.md. Exit codes: 0 complete and passed, 1 a property failed, 2 bad input or
// usage, 3 incomplete (units missing: the report names them and the command that reruns each).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/common/device.h"
#include "verify/cli/command_line.h"
#include "properties/campaign/folder.h"
#include "properties/campaign/plan.h"
#include "properties/campaign/ranks.h"
#include "properties/campaign/report.h"
#include "properties/campaign/unit_result.h"

namespace ssmv::campaign {
namespace {

constexpr int kExitFailed = 1, kExitUsage = 2, kExitIncomplete = 3;

struct RunOptions {
  std::string dir;
  std::string properties = "twin";
  uint64_t seed = prop::kDefaultRootSeed;
  int64_t multiplier = prop::kCampaignMultiplier;
  int64_t cases = 0;
  int64_t units = 16;
  int64_t shrink_steps = prop::kDefaultShrinkSteps;
  std::vector<std::string> only;
  int jobs = 1;
  bool plan_options_given = false;
};

// The binary's own path, for the rerun commands the report prints.
std::string program_path(const char* argv0) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : self.string();
}

// Test hook (docs/campaigns.md): SSMV_CAMPAIGN_KILL=r:n makes rank (or job) r kill itself
// with SIGKILL after finishing n units, as a crashed node would.
void maybe_kill_self(int rank, int64_t finished) {
  const char* spec = std::getenv("SSMV_CAMPAIGN_KILL");
  if (!spec) return;
  int r = -1;
  long long n = -1;
  if (std::sscanf(spec, "%d:%lld", &r, &n) == 2 && r == rank && finished == n) {
    std::fflush(stdout);
    ::kill(::getpid(), SIGKILL);
  }
}

// Rank 0: reads or creates the plan and works out the units to run. Throws on bad input.
Plan prepare_plan(const RunOptions& o) {
  std::filesystem::create_directories(o.dir + "/units");
  std::filesystem::create_directories(o.dir + "/counterexamples");
  Plan wanted;
  wanted.root_seed = o.seed;
  wanted.multiplier = o.multiplier;
  wanted.cases = o.cases;
  wanted.units = o.units;
  wanted.shrink_steps = o.shrink_steps;
  wanted.properties = select_properties(o.properties);
  if (std::filesystem::exists(plan_path(o.dir))) {
    const Plan plan = plan_from_json(read_json(plan_path(o.dir)), plan_path(o.dir));
    if (o.plan_options_given && !same_plan(plan, wanted)) {
      throw std::invalid_argument(o.dir + " holds a campaign with another plan (" + plan_path(o.dir) +
                                  "): resume it without plan options, or use a new folder");
    }
    return plan;
  }
  validate(wanted);
  write_json_atomically(plan_path(o.dir), plan_to_json(wanted));
  return wanted;
}

// Rank 0: the units to run (--only, else those without a result) given each rank's GPU
// (-1: none); returns "rank unit" lines. Throws on bad input.
std::string assign_units(const RunOptions& o, const Plan& plan, const std::vector<int>& gpu_of_rank) {
  const int ranks = int(gpu_of_rank.size());
  const int64_t total_units = int64_t(plan.properties.size()) * plan.units;
  if (ranks > total_units) {
    throw std::invalid_argument(std::to_string(ranks) + " processes (ranks or --jobs) for a campaign of " + std::to_string(total_units) +
                                " units (" + std::to_string(plan.properties.size()) + " properties x " +
                                std::to_string(plan.units) + "): use at most " + std::to_string(total_units) +
                                " ranks, or more --units");
  }
  build_report(o.dir, plan, "");  // every unit result already there must read back whole (throws naming it)
  std::vector<Unit> pending;
  if (!o.only.empty()) {
    for (const std::string& name : o.only) pending.push_back(parse_unit(plan, name));
  } else {
    for (const Unit& u : all_units(plan)) {
      if (read_unit(o.dir, plan, u).is_null()) pending.push_back(u);  // throws for a corrupt file
    }
  }
  std::vector<int> gpu_ranks;
  for (int r = 0; r < ranks; ++r) {
    if (gpu_of_rank[r] >= 0) gpu_ranks.push_back(r);
  }
  std::ostringstream lines;
  int64_t next_gpu = 0, next_any = 0;
  for (const Unit& u : pending) {
    if (u.needs_gpu && gpu_ranks.empty()) {
      throw std::invalid_argument(u.property + " needs a GPU and no rank has one (" +
                                  std::string(gpu_built() ? "no CUDA device visible" : "a build without CUDA") +
                                  "): run it on a GPU host, or leave the GPU properties out (--properties twin)");
    }
    const int r = u.needs_gpu ? gpu_ranks[size_t(next_gpu++ % int64_t(gpu_ranks.size()))] : int(next_any++ % ranks);
    lines << r << " " << u.name() << "\n";
  }
  return lines.str();
}

// Runs this rank's units; returns the records it wrote (one JSON text per line).
std::string run_my_units(const RunOptions& o, const Plan& plan, const std::string& assignment, const Ranks& ranks,
                         int gpu, const std::string& program) {
  std::istringstream in(assignment);
  std::string records;
  int rank = 0;
  std::string name;
  int64_t finished = 0;
  const std::string device = gpu >= 0 ? "gpu " + std::to_string(gpu) : "twin";
  while (in >> rank >> name) {
    if (rank != ranks.rank()) continue;
    const Unit u = parse_unit(plan, name);
    const json::Value record = run_unit(o.dir, plan, u, ranks.rank(), device);
    write_json_atomically(unit_path(o.dir, u), record);
    refresh_report(o.dir, plan, program, unit_path(o.dir, u));
    std::printf("[campaign] rank %d: %s %s, %lld cases, %.2f s\n", ranks.rank(), u.name().c_str(),
                record["passed"].get<bool>() ? "passed" : "FAILED", (long long)record["cases_passed"].get<int64_t>(),
                record["run"]["seconds"].get<double>());
    std::fflush(stdout);
    records += json::dump(record) + "\n";
    maybe_kill_self(ranks.rank(), ++finished);
  }
  return records;
}

// The GPU count, asked in a child process so that this one can still fork jobs (a process
// must not fork after initializing CUDA).
int probe_gpu_count() {
  int fds[2];
  if (::pipe(fds) != 0) return 0;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int n = gpu_count();
    (void)!::write(fds[1], &n, sizeof n);
    std::_Exit(0);
  }
  ::close(fds[1]);
  int n = 0;
  if (pid < 0 || ::read(fds[0], &n, sizeof n) != sizeof n) n = 0;
  ::close(fds[0]);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return n;
}

int exit_code(const json::Value& report) {
  if (report["verdict"] == "FAIL") return kExitFailed;
  return report["status"] == "complete" ? 0 : kExitIncomplete;
}

void print_summary(const json::Value& report, double wall_seconds, int processes) {
  const json::Value& t = report["totals"];
  std::printf("[campaign] %s (%s): %lld/%lld units, %lld cases passed of %lld planned, %lld failed properties, "
              "%.1f s wall on %d processes\n",
              report["verdict"].get<std::string>().c_str(), report["status"].get<std::string>().c_str(),
              (long long)t["units_done"].get<int64_t>(), (long long)t["units"].get<int64_t>(),
              (long long)t["cases_passed"].get<int64_t>(), (long long)t["cases_planned"].get<int64_t>(),
              (long long)t["failed_properties"].get<int64_t>(), wall_seconds, processes);
  for (const json::Value& m : report["missing"]) {
    std::printf("[campaign] missing %s: %s\n", m["unit"].get<std::string>().c_str(),
                m["rerun"].get<std::string>().c_str());
  }
}

// --jobs N without MPI: N forked processes, job j runs the units assigned to rank j.
int run_jobs(const RunOptions& o, const Plan& plan, const std::string& program) {
  const int gpus = probe_gpu_count();
  std::vector<int> gpu_of_job(size_t(o.jobs), -1);
  for (int j = 0; j < o.jobs && j < gpus; ++j) gpu_of_job[j] = j;
  const std::string assignment = assign_units(o, plan, gpu_of_job);
  const auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);
  std::vector<pid_t> pids;
  for (int j = 0; j < o.jobs; ++j) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int code = 0;
      try {
        if (gpu_of_job[j] >= 0) use_gpu(gpu_of_job[j]);
        run_my_units(o, plan, assignment, *single_process(j, o.jobs), gpu_of_job[j], program);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ssmv-campaign: job %d: %s\n", j, e.what());
        code = 1;
      }
      std::fflush(stdout);
      std::_Exit(code);
    }
    pids.push_back(pid);
  }
  for (size_t j = 0; j < pids.size(); ++j) {
    int status = 0;
    ::waitpid(pids[j], &status, 0);
    if (WIFSIGNALED(status)) std::fprintf(stderr, "ssmv-campaign: job %zu killed by signal %d\n", j, WTERMSIG(status));
  }
  const json::Value report = write_report(o.dir, plan, program);
  print_summary(report, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), o.jobs);
  return exit_code(report);
}

// Rank 0 computes a text (throwing on bad input) and every rank receives it; on an error
// rank 0 prints it and every rank gets nullopt.
std::optional<std::string> decided_by_rank0(Ranks& ranks, const std::function<std::string()>& decide) {
  std::string text;
  if (ranks.rank() == 0) {
    try {
      text = "ok " + decide();
    } catch (const std::exception& e) {
      text = std::string("error ") + e.what();
    }
  }
  text = ranks.broadcast(text);
  if (text.rfind("ok ", 0) == 0) return text.substr(3);
  if (ranks.rank() == 0) std::fprintf(stderr, "ssmv-campaign: %s\n", text.c_str() + 6);
  return std::nullopt;
}

int run_campaign(const RunOptions& o, Ranks& ranks, const std::string& program) {
  const std::optional<std::string> plan_text =
      decided_by_rank0(ranks, [&] { return json::dump(plan_to_json(prepare_plan(o))); });
  if (!plan_text) return kExitUsage;
  const Plan plan = plan_from_json(json::parse(*plan_text), "the plan");
  // Every unit's seed comes from the plan. rapidcheck prints its configuration when first used
  // and, without RC_PARAMS, draws a random seed of its own that no unit uses: name the root.
  ::setenv("RC_PARAMS", ("seed=" + std::to_string(plan.root_seed)).c_str(), 0);
  if (ranks.size() == 1 && o.jobs > 1) return run_jobs(o, plan, program);
  if (o.jobs > 1) {
    if (ranks.rank() == 0) std::fprintf(stderr, "ssmv-campaign: --jobs is for runs without mpirun\n");
    return kExitUsage;
  }

  // One rank per GPU of its node: local rank i takes GPU i when the node has it.
  const int gpus = gpu_count();
  const int gpu = ranks.local_rank() < gpus ? ranks.local_rank() : -1;
  if (gpu >= 0) use_gpu(gpu);
  const std::vector<std::string> gpu_texts = ranks.gather(std::to_string(gpu));
  const std::optional<std::string> assignment = decided_by_rank0(ranks, [&] {
    std::vector<int> gpu_of_rank;
    for (const std::string& t : gpu_texts) gpu_of_rank.push_back(std::stoi(t));
    return assign_units(o, plan, gpu_of_rank);
  });
  if (!assignment) return kExitUsage;

  const auto start = std::chrono::steady_clock::now();
  std::string mine;
  try {
    mine = run_my_units(o, plan, *assignment, ranks, gpu, program);
  } catch (const std::exception& e) {
    // Like a killed rank: the other ranks' results are already in the folder.
    std::fprintf(stderr, "ssmv-campaign: rank %d: %s\n", ranks.rank(), e.what());
    ranks.abort(kExitFailed);
  }
  // Rank 0 gathers every rank's records and writes those absent from its folder (ranks on
  // nodes that do not share it), with their counterexamples, then the final report.
  const std::vector<std::string> all = ranks.gather(mine);
  if (ranks.rank() != 0) return 0;
  for (const std::string& text : all) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      const json::Value record = json::parse(line);
      const Unit u = parse_unit(plan, record["unit"].get<std::string>());
      if (!std::filesystem::exists(unit_path(o.dir, u))) write_json_atomically(unit_path(o.dir, u), record);
      const json::Value& f = record["failure"];
      if (!f.is_null() && !f["counterexample"].is_null() &&
          !std::filesystem::exists(o.dir + "/" + f["counterexample_file"].get<std::string>())) {
        write_json_atomically(o.dir + "/" + f["counterexample_file"].get<std::string>(), f["counterexample"]);
      }
    }
  }
  const json::Value report = write_report(o.dir, plan, program);
  print_summary(report, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                ranks.size());
  return exit_code(report);
}

int list_properties() {
  for (const prop::RegisteredProperty& r : prop::registered_properties()) {
    std::printf("%-48s %8lld base cases%s%s\n", r.id().c_str(), (long long)r.base_cases, r.needs_gpu ? "  (GPU)" : "",
                r.fails_on_purpose ? "  (fails on purpose; only when named)" : "");
  }
  return 0;
}

int report_only(const std::string& dir, const std::string& program) {
  const Plan plan = plan_from_json(read_json(plan_path(dir)), plan_path(dir));
  const json::Value report = write_report(dir, plan, program);
  print_summary(report, 0, 0);
  return exit_code(report);
}

// `ssmv campaign` (ssmv-campaign) reads its command line as every ssmv command does
// (verify/cli/command_line.h): each subcommand's options defined once, the help generated
// from them, an option given twice an error.
void usage() {
  std::printf(
      "usage: ssmv campaign run FOLDER [OPTIONS] | report FOLDER | list | gpus\n"
      "Property campaigns over MPI ranks or forked processes (docs/campaigns.md).\n"
      "  run     run (or resume) a campaign in FOLDER; under mpirun: one rank per process\n"
      "  report  rebuild report.json and report.md of FOLDER from its unit results\n"
      "  list    list the properties this binary holds\n"
      "  gpus    print the number of CUDA devices this process sees\n"
      "`ssmv campaign SUBCOMMAND --help` for its options\n"
      "exit codes: 0 complete and passed, 1 a property failed, 2 bad input or usage, 3 incomplete\n");
}

constexpr const char* kExitCodes =
    "exit codes: 0 complete and passed, 1 a property failed, 2 bad input or usage, 3 incomplete (units missing: the "
    "report names them and the command that reruns each).";

// Reads `run`'s options into `o`; false when only the help was asked for.
bool read_run_options(const std::vector<std::string>& args, RunOptions& o) {
  using ssmv::cli::CommandLine;
  CommandLine line("ssmv campaign run", "Runs (or resumes) a campaign in FOLDER: every rank (under mpirun) or job "
                   "runs its share of the plan's fixed units, writes each unit's result as it finishes and rewrites "
                   "the report; rank 0 gathers the results.", kExitCodes);
  line.positional("FOLDER", "the campaign folder (plan, unit results, counterexamples, report)", o.dir, false,
                  "one campaign folder per run");
  line.group("The plan (fixed when the folder is created; a resume must give the same or none)");
  const auto plan = [&o](auto set) {
    return [&o, set](auto v) {
      o.plan_options_given = true;
      set(v);
    };
  };
  line.text("--properties", "P", "twin (default), gpu, all, or ids / suite names, comma-separated",
            plan([&o](const std::string& v) { o.properties = v; }));
  line.u64("--seed", "S", "root seed (default 20261130)", plan([&o](uint64_t v) { o.seed = v; }));
  line.integer("--multiplier", "M", "cases per property = base (or --cases) x this (default 100)", 1, int64_t(1) << 40,
               plan([&o](int64_t v) { o.multiplier = v; }));
  line.integer("--cases", "N", "every property's case count instead of its base count", 1, int64_t(1) << 40,
               plan([&o](int64_t v) { o.cases = v; }));
  line.integer("--units", "K", "units per property, independent of the rank count (default 16)", 1, 1 << 20,
               plan([&o](int64_t v) { o.units = v; }));
  line.integer("--shrink-steps", "N", "shrink budget in steps (default 2000, 0: none)", 0, int64_t(1) << 40,
               plan([&o](int64_t v) { o.shrink_steps = v; }));
  line.group("This run");
  line.text("--only", "UNIT,...", "run only these units (Suite.Name#k, comma-separated), e.g. as the report's rerun "
            "line says", [&o](const std::string& v) {
    size_t start = 0;
    while (start <= v.size()) {
      const size_t comma = std::min(v.find(',', start), v.size());
      if (comma > start) o.only.push_back(v.substr(start, comma - start));
      start = comma + 1;
    }
  });
  line.integer("--jobs", "N", "without mpirun: this many processes (default 1)", 1, 4096,
               [&o](int64_t v) { o.jobs = int(v); });
  if (!line.parse(args)) return false;
  if (o.dir.empty()) throw ssmv::cli::UsageError("ssmv campaign run: FOLDER is required");
  return true;
}

}  // namespace
}  // namespace ssmv::campaign

int main(int argc, char** argv) {
  using namespace ssmv::campaign;
  using ssmv::cli::CommandLine;
  using ssmv::cli::UsageError;
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  RunOptions o;
  std::string report_dir;
  try {
    if (sub.empty() || sub == "-h" || sub == "--help") {
      usage();
      return sub.empty() ? kExitUsage : 0;
    }
    if (sub == "run") {
      if (!read_run_options(rest, o)) return 0;
    } else if (sub == "report") {
      CommandLine line("ssmv campaign report", "Rebuilds report.json and report.md of FOLDER from its unit results.",
                       kExitCodes);
      line.positional("FOLDER", "the campaign folder", report_dir, false, "one campaign folder per report");
      if (!line.parse(rest)) return 0;
      if (report_dir.empty()) throw UsageError("ssmv campaign report: FOLDER is required");
    } else if (sub == "list" || sub == "gpus") {
      CommandLine line("ssmv campaign " + sub, sub == "list" ? "Lists the properties this binary holds."
                                                             : "Prints the number of CUDA devices this process sees.");
      if (!line.parse(rest)) return 0;
    } else {
      throw UsageError("ssmv campaign: unknown subcommand '" + sub + "' (expected run, report, list or gpus)");
    }
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    std::fprintf(stderr, "%s%s\n", msg.rfind("ssmv ", 0) == 0 ? "" : "ssmv campaign: ", msg.c_str());
    return kExitUsage;
  }
  const std::string program = program_path(argv[0]);
  try {
    if (sub == "list") return list_properties();
    if (sub == "gpus") {
      std::printf("%d\n", ssmv::gpu_count());
      return 0;
    }
    if (sub == "report") return report_only(report_dir, program);
    std::unique_ptr<Ranks> ranks = start_ranks(&argc, &argv);
    return run_campaign(o, *ranks, program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssmv-campaign: %s\n", e.what());
    return kExitUsage;
  }
}
