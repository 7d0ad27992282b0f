// The indexing family (table/indexing.json): index_select, gather,
// index_add, scatter and scatter_add along one dim, i64 indices. No atomics.
// Rank-0 tensors arrive as shape [1].
//
// index_select and gather: one invocation per destination element.
// index_add, scatter and scatter_add: one invocation per *slice* (a position
// of every dim but `dim`), which walks positions [first, end) of the index
// along `dim` in ascending order and applies each to its destination
// element. Two writers of one element always share the slice, so they
// apply in the order the table fixes (index_add: ascending positions of
// `index`; scatter and scatter_add: row-major order of `index`, so the last
// write wins and sums round after each addition, as torch does). The host
// cuts the walk into dispatches of a bounded length, run in order
// (lavapipe's loop limit, common.glsl); the cost is O(index elements), not
// O(destination x index).
//
// Variants: OP_CHECK (every index value against the dim's size: PARTIAL,
// one invocation per chunk of the index records its first bad position;
// COMBINE, one invocation takes the first record that found one), and
// OP_<KERNEL> with DT_<NAME>, which do nothing when `status` reports a bad
// index, so memory is never touched out of bounds.
#version 460
#include "common.glsl"

#if defined(OP_CHECK)

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor index;
  int64_t bound;     // the indexed dim's size
  uint64_t records;  // per chunk: first bad position + 1 (0: none), its value
  uint64_t status;   // the verdict, in a record's format
  uint64_t count;    // invocations of this pass
  int64_t pass;      // 0 PARTIAL, 1 COMBINE
  int64_t chunk;     // index elements per record
  int64_t parts;     // records
};

void main() {
  const int64_t id = global_id();
  Args args = Args(push.args);
  if (id >= int64_t(args.count)) return;
  int64_t bad = 0;
  int64_t bad_value = 0;
  if (args.pass == 0) {
    const Tensor index = args.index;
    const int64_t first = id * args.chunk;
    const int64_t end = min(numel(index), first + args.chunk);
    for (int64_t i = first; i < end; ++i) {
      const int64_t value = load_i64(index, element_offset(index, i));
      if (value < 0 || value >= args.bound) {
        bad = i + 1;
        bad_value = value;
        break;
      }
    }
    STORE_int64_t(args.records + uint64_t(id) * 16ul, bad);
    STORE_int64_t(args.records + uint64_t(id) * 16ul + 8ul, bad_value);
    return;
  }
  for (int64_t p = 0; p < args.parts && bad == 0; ++p) {
    bad = LOAD_int64_t(args.records + uint64_t(p) * 16ul);
    bad_value = LOAD_int64_t(args.records + uint64_t(p) * 16ul + 8ul);
  }
  STORE_int64_t(args.status, bad);
  STORE_int64_t(args.status + 8ul, bad_value);
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
                   // (walks: size 1 along dim)
  Scalar value;    // index_add: alpha; scatter: a scalar src
  int64_t dim;
  int64_t scalar_source;  // scatter: src is `value`
  uint64_t status;        // the check pass's words
  uint64_t count;         // elements of grid
  int64_t first;          // index_add, scatter(_add): the positions along
  int64_t end;            // dim this dispatch walks
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

#else
  // A walk: coord names the slice (coord[dim] = 0); position j of the index
  // along dim writes dest[coord with dim = index value] from
  // source[coord with dim = j]. Offsets step by the strides along dim.
  const int64_t dest_base = offset_at(dest, coord, dim, 0);
  const int64_t dest_step = dest.strides[dim];
  const int64_t source_base = offset_at(source, coord, dim, 0);
  const int64_t source_step = source.strides[dim];
#if defined(OP_INDEX_ADD)
  const int64_t index_base = 0;
  const int64_t index_step = index.strides[0];
#else
  const int64_t index_base = offset_at(index, coord, dim, 0);
  const int64_t index_step = index.strides[dim];
#endif
  for (int64_t j = args.first; j < args.end; ++j) {
    const int64_t at = dest_base + load_i64(index, index_base + j * index_step) * dest_step;
#if defined(OP_SCATTER)
    store_t(dest, at,
            args.scalar_source != 0 ? args.value.v : load_t(source, source_base + j * source_step));
#elif defined(OP_INDEX_ADD)
    store_t(dest, at,
            accumulate(load_t(dest, at), args.value.v * load_t(source, source_base + j * source_step)));
#elif defined(OP_SCATTER_ADD)
    store_t(dest, at, accumulate(load_t(dest, at), load_t(source, source_base + j * source_step)));
#else
#error "index.comp: no OP_<KERNEL> defined"
#endif
  }
#endif
}

#endif  // OP_CHECK
