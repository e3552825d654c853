// The processes of a campaign: MPI ranks when ssmv-campaign runs under an MPI launcher
// (mpirun, srun) in a build with MPI, else one process. Rank 0 plans and gathers; every rank
// runs its units. Collectives are called by every rank in the same order.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ssmv::campaign {

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's index among the ranks of its node (binds it to GPU local_rank() when the
  // node has that many).
  virtual int local_rank() const = 0;
  // Rank 0 gets every rank's value in rank order; the others get an empty vector.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Every rank gets rank 0's text.
  virtual std::string broadcast(const std::string& from_rank0) = 0;
  virtual void barrier() = 0;
  // Ends every rank (MPI_Abort), or this process.
  [[noreturn]] virtual void abort(int code) = 0;
};

// True when an MPI launcher started this process (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE).
bool launched_by_mpi();
// True when this build has MPI (SSMV_HAVE_MPI).
bool mpi_built();
// MPI ranks when launched_by_mpi() (throws std::runtime_error if this build lacks MPI: each
// process would run the whole campaign), else the one process.
std::unique_ptr<Ranks> start_ranks(int* argc, char*** argv);
// The one-process Ranks (also each forked job of --jobs: rank `rank` of `size`, no collectives).
std::unique_ptr<Ranks> single_process(int rank = 0, int size = 1);

}  // namespace ssmv::campaign
