// The indexing family (table/indexing.json): index_select, gather,
// index_add, scatter and scatter_add along one dim, i64 indices. No atomics:
// each invocation owns one destination element and finds its writers by
// walking the index itself, in the order the table fixes (index_add:
// ascending positions of `index`; scatter and scatter_add: row-major order
// of `index`, so the last write wins and sums round after each addition,
// as torch does). Rank-0 tensors arrive as shape [1].
//
// Variants: OP_CHECK (one invocation: every index value against the dim's
// size, the first bad one reported in `status`), and OP_<KERNEL> with
// DT_<NAME>, which do nothing when `status` reports a bad index, so memory
// is never touched out of bounds.
#version 460
#include "common.glsl"

#if defined(OP_CHECK)

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor index;
  int64_t bound;    // the indexed dim's size
  uint64_t status;  // two int64 words: first bad position + 1 (0: none), its value
};

void main() {
  if (global_id() != 0) return;
  Args args = Args(push.args);
  const Tensor index = args.index;
  const int64_t count = numel(index);
  int64_t bad = 0;
  int64_t bad_value = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t value = load_i64(index, element_offset(index, i));
    if (value < 0 || value >= args.bound) {
      bad = i + 1;
      bad_value = value;
      break;
    }
  }
  STORE_int64_t(args.status, bad);
  STORE_int64_t(args.status + 8, bad_value);
}

#else

// One 8-byte slot in the compute type.
struct Scalar {
  CT v;
#if defined(DT_F32) || defined(DT_F16)
  uint pad;
#endif
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor dest;     // out (index_select, gather) or self
  Tensor source;   // in (index_select, gather), source (index_add), src (scatter)
  Tensor index;
  Tensor grid;     // sizes of the iteration space, one invocation per element
  Scalar value;    // index_add: alpha; scatter: a scalar src
  int64_t dim;
  int64_t scalar_source;  // scatter: src is `value`
  uint64_t status;        // the check pass's words
  uint64_t count;         // elements of grid
};

// Row-major coordinates of `linear` over `shape`'s sizes.
void unravel(Tensor shape, int64_t linear, out int64_t coord[8]) {
  for (int d = shape.rank - 1; d >= 0; --d) {
    coord[d] = linear % shape.sizes[d];
    linear /= shape.sizes[d];
  }
}

// Element offset in `t` of `coord` with coord[dim] replaced by `at`.
int64_t offset_at(Tensor t, int64_t coord[8], int dim, int64_t at) {
  int64_t offset = at * t.strides[dim];
  for (int d = 0; d < t.rank; ++d) {
    if (d != dim) offset += coord[d] * t.strides[d];
  }
  return offset;
}

// The value of `dest` after adding `addend`, rounded to the dtype as a
// stored tensor would be (integers wrap to their width).
CT accumulate(CT total, CT addend) { return CT(ST(total + addend)); }

void main() {
  const int64_t i = global_id();
  Args args = Args(push.args);
  if (uint64_t(i) >= args.count) return;
  if (LOAD_int64_t(args.status) != 0) return;  // a bad index: write nothing
  const Tensor dest = args.dest;
  const Tensor source = args.source;
  const Tensor index = args.index;
  const int dim = int(args.dim);
  int64_t coord[8];
  unravel(args.grid, i, coord);

#if defined(OP_INDEX_SELECT) || defined(OP_GATHER)
  // dest[coord] = source[coord with dim = index[...]]
#if defined(OP_INDEX_SELECT)
  const int64_t at = load_i64(index, coord[dim] * index.strides[0]);
#else
  const int64_t at = load_i64(index, offset_at(index, coord, dim, coord[dim]));
#endif
  store_t(dest, offset_at(dest, coord, dim, coord[dim]),
          load_t(source, offset_at(source, coord, dim, at)));

#elif defined(OP_INDEX_ADD)
  // dest[coord] += alpha * source[coord with dim = j] for each j, ascending,
  // with index[j] == coord[dim].
  const int64_t target = coord[dim];
  const int64_t length = index.sizes[0];
  const int64_t dest_offset = offset_at(dest, coord, dim, target);
  CT total = load_t(dest, dest_offset);
  bool written = false;
  for (int64_t j = 0; j < length; ++j) {
    if (load_i64(index, j * index.strides[0]) != target) continue;
    total = accumulate(total, args.value.v * load_t(source, offset_at(source, coord, dim, j)));
    written = true;
  }
  if (written) store_t(dest, dest_offset, total);

#elif defined(OP_SCATTER) || defined(OP_SCATTER_ADD)
  // The grid is index's shape with dim's size = dest's: coord names a dest
  // element whose writers are index[coord with dim = j], j ascending.
  const int64_t target = coord[dim];
  const int64_t length = index.sizes[dim];
  const int64_t dest_offset = offset_at(dest, coord, dim, target);
#if defined(OP_SCATTER)
  int64_t last = -1;
  for (int64_t j = 0; j < length; ++j) {
    if (load_i64(index, offset_at(index, coord, dim, j)) == target) last = j;
  }
  if (last < 0) return;
  store_t(dest, dest_offset,
          args.scalar_source != 0 ? args.value.v
                                  : load_t(source, offset_at(source, coord, dim, last)));
#else
  CT total = load_t(dest, dest_offset);
  bool written = false;
  for (int64_t j = 0; j < length; ++j) {
    if (load_i64(index, offset_at(index, coord, dim, j)) != target) continue;
    total = accumulate(total, load_t(source, offset_at(source, coord, dim, j)));
    written = true;
  }
  if (written) store_t(dest, dest_offset, total);
#endif

#else
#error "index.comp: no OP_<KERNEL> defined"
#endif
}

#endif  // OP_CHECK
