// The number policies the reference core (head_recurrence.h) is templated on. Each
// operation is ONE correctly rounded (to nearest) MPFR operation at the destination's
// precision, so both policies give identical bits for the same sequence of operations.
//
//   RawMpfr    mpfr_t, called directly (the default: no wrapper overhead).
//   BoostMpfr  boost::multiprecision::mpfr_float through its operators. Boost 1.74's MPFR
//              backend has no log1p of its own (the generic series would not be correctly
//              rounded), so log1p calls mpfr_log1p on the backend's data.
//
// All variables of one run share one precision; inputs are set exactly (fp32 values have
// 24 significant bits and every precision used is >= 24).
#pragma once

#include <mpfr.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace ssmv::ref {

struct RawMpfr {
  // Exactly one mpfr_t (32 bytes, two per cache line in arrays); a null limb pointer
  // marks a variable not yet initialised.
  class Num {
   public:
    Num() { v_->_mpfr_d = nullptr; }
    ~Num() {
      if (v_->_mpfr_d) mpfr_clear(v_);
    }
    Num(const Num&) = delete;
    Num& operator=(const Num&) = delete;
    void init(mpfr_prec_t prec) {
      if (v_->_mpfr_d) {
        mpfr_set_prec(v_, prec);
      } else {
        mpfr_init2(v_, prec);
      }
      mpfr_set_zero(v_, 1);
    }
    mpfr_ptr get() { return v_; }
    mpfr_srcptr get() const { return v_; }

   private:
    mpfr_t v_;
  };
  static_assert(sizeof(Num) == sizeof(mpfr_t));

  // n variables of one precision in ONE block, each mpfr_t followed by its own limbs
  // (mpfr_custom_init_set), so a state element and its significand share cache lines.
  class Array {
   public:
    Array(size_t n, mpfr_prec_t prec)
        : n_(n),
          stride_((sizeof(Num) + mpfr_custom_get_size(prec) + alignof(Num) - 1) / alignof(Num) *
                  alignof(Num)),
          block_(new unsigned char[n * stride_ + kAlign]) {
      unsigned char* base = block_.get();
      base += (kAlign - reinterpret_cast<uintptr_t>(base) % kAlign) % kAlign;
      base_ = base;
      for (size_t i = 0; i < n_; ++i) {
        Num* v = new (base_ + i * stride_) Num;
        void* limbs = base_ + i * stride_ + sizeof(Num);
        mpfr_custom_init(limbs, prec);
        mpfr_custom_init_set(v->get(), MPFR_ZERO_KIND, 0, prec, limbs);
      }
    }
    ~Array() {
      for (size_t i = 0; i < n_; ++i) {
        Num& v = (*this)[i];
        v.get()->_mpfr_d = nullptr;  // the limbs belong to the block, not to MPFR
        v.~Num();
      }
    }
    Array(const Array&) = delete;
    Array& operator=(const Array&) = delete;
    Num& operator[](size_t i) { return *std::launder(reinterpret_cast<Num*>(base_ + i * stride_)); }
    const Num& operator[](size_t i) const {
      return *std::launder(reinterpret_cast<const Num*>(base_ + i * stride_));
    }

   private:
    static constexpr size_t kAlign = 64;  // a cache line
    size_t n_, stride_;
    std::unique_ptr<unsigned char[]> block_;
    unsigned char* base_ = nullptr;
  };

  static void init(Num& r, mpfr_prec_t prec) { r.init(prec); }
  static mpfr_srcptr view(const Num& a) { return a.get(); }
  static void set(Num& r, double v) { mpfr_set_d(r.get(), v, MPFR_RNDN); }
  static void set(Num& r, mpfr_srcptr v) { mpfr_set(r.get(), v, MPFR_RNDN); }
  static void zero(Num& r) { mpfr_set_zero(r.get(), 1); }
  static void add(Num& r, const Num& a, const Num& b) { mpfr_add(r.get(), a.get(), b.get(), MPFR_RNDN); }
  static void mul(Num& r, const Num& a, const Num& b) { mpfr_mul(r.get(), a.get(), b.get(), MPFR_RNDN); }
  static void div(Num& r, const Num& a, const Num& b) { mpfr_div(r.get(), a.get(), b.get(), MPFR_RNDN); }
  static void neg(Num& r, const Num& a) { mpfr_neg(r.get(), a.get(), MPFR_RNDN); }
  static void exp(Num& r, const Num& a) { mpfr_exp(r.get(), a.get(), MPFR_RNDN); }
  static void log1p(Num& r, const Num& a) { mpfr_log1p(r.get(), a.get(), MPFR_RNDN); }
  static int cmp(const Num& a, double v) { return mpfr_cmp_d(a.get(), v); }
};

struct BoostMpfr {
  using Num = boost::multiprecision::mpfr_float;

  // n variables of one precision (each Boost number owns its limbs).
  class Array {
   public:
    Array(size_t n, mpfr_prec_t prec) : v_(new Num[n]) {
      for (size_t i = 0; i < n; ++i) init(v_[i], prec);
    }
    Num& operator[](size_t i) { return v_[i]; }
    const Num& operator[](size_t i) const { return v_[i]; }

   private:
    std::unique_ptr<Num[]> v_;
  };

  // Boost 1.74 sets precisions in decimal digits; the bits go straight to the backend.
  static void init(Num& r, mpfr_prec_t prec) {
    mpfr_set_prec(r.backend().data(), prec);
    r = 0;
  }
  static mpfr_srcptr view(const Num& a) { return a.backend().data(); }
  static void set(Num& r, double v) { r = v; }
  static void set(Num& r, mpfr_srcptr v) { mpfr_set(r.backend().data(), v, MPFR_RNDN); }
  static void zero(Num& r) { r = 0; }
  // Each of these assigns an expression of two distinct immediates, which Boost evaluates
  // as one eval_add/eval_multiply/... (mpfr_add/mpfr_mul/...) into r at r's precision.
  static void add(Num& r, const Num& a, const Num& b) { r = a + b; }
  static void mul(Num& r, const Num& a, const Num& b) { r = a * b; }
  static void div(Num& r, const Num& a, const Num& b) { r = a / b; }
  static void neg(Num& r, const Num& a) { r = -a; }
  static void exp(Num& r, const Num& a) { r = boost::multiprecision::exp(a); }
  static void log1p(Num& r, const Num& a) {
    mpfr_log1p(r.backend().data(), a.backend().data(), MPFR_RNDN);
  }
  static int cmp(const Num& a, double v) { return a.compare(v); }
};

}  // namespace ssmv::ref
