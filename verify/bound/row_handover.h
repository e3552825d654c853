// The chunked bound running beside the reference (verify/judge/external_check.cpp): the bound
// writes each (token, head) row of y_before_dx (y_before_dx.h) a piece at a time, the judging
// reads and releases each row as the reference hands its token over, and this hands the rows
// from one to the other so that only a few pieces' rows per head are held at once, instead of
// every y element's float (4 bytes each, 134 MB at 65,536 tokens of 8 heads, P 64) held whole
// between a bounds phase and the reference.
//
// Two directions of waiting:
// * the judging waits for a row (wait_row) until the bound has written its head's pieces
//   through that token (produced), and for a sequence's final-state bounds (wait_sequence)
//   until the bound has written them (sequence_done);
// * the bound waits before a head's piece (wait_room) until the judging has read that
//   (sequence, head) pair's rows up to `lead` tokens before the piece (consumed).
// Neither can wait forever while every (sequence, head) pair of the reference runs at once
// (the check asks for that before it uses a handover): the bound has written a head's rows
// through a piece's first token before it waits on that piece, and the pair reads them
// without the bound. When the reference fails, unthrottle() lets the bound finish without
// waiting, so the reference's other pairs finish and its error is the one reported; when the
// bound fails, fail() makes every waiting judging throw RowHandoverStopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace ssmv::bound {

// What the judging throws when the bound stopped before writing what it waits for (the bound's
// own exception is the check's).
struct RowHandoverStopped : std::runtime_error {
  RowHandoverStopped() : std::runtime_error("chunked bound stopped before the row was written") {}
};

class RowHandover {
 public:
  // The sequences [cu_seqlens[s], cu_seqlens[s + 1]) of H heads; the bound starts a head's piece
  // only when that pair has read its rows up to `lead_tokens` before the piece.
  RowHandover(const std::vector<int64_t>& cu_seqlens, int64_t H, int64_t lead_tokens);

  // The bound's side.
  // Blocks until pair (seq, h) has consumed every token before t0 − lead (global token index),
  // or the handover is unthrottled.
  void wait_room(int64_t seq, int64_t h, int64_t t0);
  // Rows of head h below global token t_end are written (release: the writes happen before).
  void produced(int64_t h, int64_t t_end);
  // The final-state bounds of sequences [0, seq] are written.
  void sequence_done(int64_t seq);
  // The bound stopped (an exception): waiting and later judging throws RowHandoverStopped.
  void fail();

  // The judging's side.
  // Blocks until row (t, h) is written; throws RowHandoverStopped if the bound failed.
  void wait_row(int64_t t, int64_t h);
  // Blocks until sequence seq's final-state bounds are written; throws as wait_row.
  void wait_sequence(int64_t seq);
  // Pair (seq, h) has read every row below global token t_end.
  void consumed(int64_t seq, int64_t h, int64_t t_end);
  // The reference failed, or is done: the bound no longer waits for room.
  void unthrottle();

 private:
  std::atomic<int64_t>& pair(std::unique_ptr<std::atomic<int64_t>[]>& a, int64_t seq, int64_t h) {
    return a[size_t(seq * H_ + h)];
  }

  int64_t S_, H_, lead_;
  std::unique_ptr<std::atomic<int64_t>[]> produced_;  // [H]: rows below this token written
  std::unique_ptr<std::atomic<int64_t>[]> consumed_;  // [S, H]: rows below this token read
  std::unique_ptr<std::atomic<int64_t>[]> wanted_;    // [S, H]: what wait_room waits for (else max)
  std::atomic<int64_t> sequences_done_{0};
  std::atomic<bool> failed_{false}, unthrottled_{false};
};

}  // namespace ssmv::bound
