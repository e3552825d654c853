#include "properties/campaign/ranks.h"

#include <cstdlib>
#include <stdexcept>

#ifdef SSMV_HAVE_MPI
#include <mpi.h>
#endif

namespace ssmv::campaign {
namespace {

class SingleProcess final : public Ranks {
 public:
  SingleProcess(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return rank_; }
  std::vector<std::string> gather(const std::string& mine) override { return {mine}; }
  std::string broadcast(const std::string& from_rank0) override { return from_rank0; }
  void barrier() override {}
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

 private:
  int rank_, size_;
};

#ifdef SSMV_HAVE_MPI
class MpiRanks final : public Ranks {
 public:
  MpiRanks(int* argc, char*** argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_);
    MPI_Comm_free(&node);
  }
  ~MpiRanks() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_; }
  std::vector<std::string> gather(const std::string& mine) override {
    const long long n = static_cast<long long>(mine.size());
    std::vector<long long> sizes(rank_ == 0 ? size_ : 0);
    MPI_Gather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    // One message per rank (MPI counts are int: a rank's texts stay below 2 GiB).
    std::vector<std::string> all;
    if (rank_ == 0) {
      all.resize(size_);
      all[0] = mine;
      for (int r = 1; r < size_; ++r) {
        all[r].resize(size_t(sizes[r]));
        MPI_Recv(all[r].data(), int(sizes[r]), MPI_CHAR, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else {
      MPI_Send(mine.data(), int(n), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    return all;
  }
  std::string broadcast(const std::string& from_rank0) override {
    long long n = static_cast<long long>(from_rank0.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    std::string text = rank_ == 0 ? from_rank0 : std::string(size_t(n), '\0');
    MPI_Bcast(text.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    return text;
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1, local_ = 0;
};
#endif

}  // namespace

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
}

#ifdef SSMV_HAVE_MPI
bool mpi_built() { return true; }
#else
bool mpi_built() { return false; }
#endif

std::unique_ptr<Ranks> single_process(int rank, int size) { return std::make_unique<SingleProcess>(rank, size); }

std::unique_ptr<Ranks> start_ranks(int* argc, char*** argv) {
  if (!launched_by_mpi()) return single_process();
#ifdef SSMV_HAVE_MPI
  return std::make_unique<MpiRanks>(argc, argv);
#else
  (void)argc;
  (void)argv;
  throw std::runtime_error(
      "started by an MPI launcher, but this ssmv-campaign was built without MPI (install libopenmpi-dev and "
      "rebuild): every process would run the whole campaign; run it without mpirun (--jobs N for N processes)");
#endif
}

}  // namespace ssmv::campaign
