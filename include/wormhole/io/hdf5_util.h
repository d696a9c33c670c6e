// HDF5 C API helpers shared by the results and memo files (src/io/hdf5_*.cpp, memo/memo_file.cpp):
// owned ids, quiet error stacks turned into exceptions, scalar attributes, and compound tables that
// h5py reads as is — written and read back.
#pragma once
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wh::h5 {

// Owns one HDF5 id and closes it with the matching H5?close, so an exception half-way through
// leaves no open objects behind (which would keep the file open and unreadable).
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() { close(); }
  Handle() = default;  ///< holds nothing
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) close(), id_ = o.id_, close_ = o.close_, o.id_ = -1;
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }
  herr_t close() {
    herr_t rc = 0;
    if (id_ >= 0) rc = close_(id_);
    id_ = -1;
    return rc;
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// HDF5 prints its whole error stack to stderr by default; we report errors ourselves, so the
// printing is switched off while we write and the caller's handler is put back afterwards.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The innermost entry of the error stack is the most specific one (for a failed create it holds
// the OS error text), so that is what goes into our message.
inline herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0 && e && e->desc) *static_cast<std::string*>(out) = std::string(e->func_name) + ": " + e->desc;
  return 0;
}
inline std::string error_detail() {
  std::string s;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &s);
  H5Eclear2(H5E_DEFAULT);
  return s.empty() ? "unknown HDF5 error" : s;
}

// herr_t results widen to hid_t, so one checker serves both.
inline hid_t check(hid_t rc, const std::string& what) {
  if (rc < 0) throw std::runtime_error("HDF5: " + what + " failed: " + error_detail());
  return rc;
}

inline Handle make_space(std::vector<hsize_t> dims, std::vector<hsize_t> maxdims, const std::string& what) {
  return Handle(check(H5Screate_simple(int(dims.size()), dims.data(), maxdims.data()), what), H5Sclose);
}

// Variable-length UTF-8 string: h5py returns it as str (attributes) or bytes (datasets, .asstr()).
inline Handle string_type() {
  Handle t(check(H5Tcopy(H5T_C_S1), "copying the string type"), H5Tclose);
  check(H5Tset_size(t, H5T_VARIABLE), "making a variable-length string type");
  check(H5Tset_cset(t, H5T_CSET_UTF8), "setting UTF-8 on the string type");
  return t;
}

// Fixed-length UTF-8 string of `width` bytes, NUL-padded: h5py returns it as bytes (numpy 'S'), with no
// per-value heap object (a variable-length string per row costs about 38 B more and a heap insert per value).
inline Handle fixed_string_type(size_t width) {
  Handle t(check(H5Tcopy(H5T_C_S1), "copying the string type"), H5Tclose);
  check(H5Tset_size(t, std::max<size_t>(width, 1)), "sizing a fixed-length string type");
  check(H5Tset_strpad(t, H5T_STR_NULLPAD), "padding a fixed-length string type");
  check(H5Tset_cset(t, H5T_CSET_UTF8), "setting UTF-8 on the string type");
  return t;
}

inline void attr_string(hid_t obj, const char* name, const std::string& value) {
  Handle type = string_type();
  Handle space(check(H5Screate(H5S_SCALAR), "creating a scalar space"), H5Sclose);
  Handle a(check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT),
                 std::string("creating attribute ") + name),
           H5Aclose);
  const char* p = value.c_str();
  check(H5Awrite(a, type, &p), std::string("writing attribute ") + name);
}

template <class T>
inline void attr_scalar(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, T value) {
  Handle space(check(H5Screate(H5S_SCALAR), "creating a scalar space"), H5Sclose);
  Handle a(check(H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT),
                 std::string("creating attribute ") + name),
           H5Aclose);
  check(H5Awrite(a, mem_type, &value), std::string("writing attribute ") + name);
}
inline void attr_u64(hid_t o, const char* n, uint64_t v) { attr_scalar(o, n, H5T_STD_U64LE, H5T_NATIVE_UINT64, v); }
inline void attr_i64(hid_t o, const char* n, int64_t v) { attr_scalar(o, n, H5T_STD_I64LE, H5T_NATIVE_INT64, v); }
inline void attr_f64(hid_t o, const char* n, double v) { attr_scalar(o, n, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v); }
inline void attr_u8(hid_t o, const char* n, uint8_t v) { attr_scalar(o, n, H5T_STD_U8LE, H5T_NATIVE_UINT8, v); }

// A compound field: where it sits in our C struct, and its (little-endian, fixed-size) file type.
struct Field {
  const char* name;
  size_t offset;
  hid_t mem;
  hid_t file;
};

// The memory type mirrors the struct (with its padding); the file type is the same fields packed
// back to back in standard little-endian types, so the file does not depend on this compiler.
inline std::pair<Handle, Handle> compound(size_t struct_size, const std::vector<Field>& fields) {
  size_t packed = 0;
  for (const Field& f : fields) packed += H5Tget_size(f.file);
  Handle mem(check(H5Tcreate(H5T_COMPOUND, struct_size), "creating a compound type"), H5Tclose);
  Handle file(check(H5Tcreate(H5T_COMPOUND, packed), "creating a compound type"), H5Tclose);
  size_t at = 0;
  for (const Field& f : fields) {
    check(H5Tinsert(mem, f.name, f.offset, f.mem), std::string("adding field ") + f.name);
    check(H5Tinsert(file, f.name, at, f.file), std::string("adding field ") + f.name);
    at += H5Tget_size(f.file);
  }
  return {std::move(mem), std::move(file)};
}

// Whether `t` holds a variable-length part (a VL string or sequence, itself or in a compound member):
// HDF5 then insists on a fill value.
inline bool has_variable(hid_t t) {
  if (H5Tget_class(t) == H5T_VLEN || H5Tis_variable_str(t) > 0) return true;
  if (H5Tget_class(t) != H5T_COMPOUND) return false;
  for (int i = 0, n = H5Tget_nmembers(t); i < n; ++i) {
    const hid_t m = H5Tget_member_type(t, static_cast<unsigned>(i));
    const bool v = has_variable(m);
    H5Tclose(m);
    if (v) return true;
  }
  return false;
}

// The rows in a chunk of a table of `n` rows of `file_type` (create_table): ~1 MiB of them.
inline size_t table_chunk_rows(hid_t file_type, size_t n) {
  return std::max<size_t>(1, std::min<size_t>(n, (size_t(1) << 20) / H5Tget_size(file_type)));
}

// Rows per H5Dwrite for chunks of `chunk_rows` rows: whole chunks, about `want` rows. A write of
// whole chunks goes to the file as it is; one that ends inside a chunk makes HDF5 build that chunk
// in its cache (GPT-7B's /flows: 0.6 G instructions of copies and 0.45 G of fills).
inline size_t slab_rows(size_t chunk_rows, size_t want = 65536) {
  return chunk_rows * std::max<size_t>(1, want / chunk_rows);
}
// The same for a table of `n` rows of `file_type` (create_table's chunks).
inline size_t table_slab_rows(hid_t file_type, size_t n, size_t want = 65536) {
  return slab_rows(table_chunk_rows(file_type, n), want);
}

// A dataset transfer property list whose type-conversion buffers hold `rows` rows of `mem_type` and
// `file_type`, between 64 KiB and HDF5's default 1 MiB: by default every read or write that converts
// allocates and zeroes 1 MiB twice (the conversion and background buffers), about 0.2 M instructions each —
// most of what a small table costs. (HDF5 refuses a buffer of a few rows where a type has variable-length
// parts.) Throws std::runtime_error on an HDF5 failure.
inline Handle transfer_list(size_t rows, hid_t mem_type, hid_t file_type) {
  Handle dxpl(check(H5Pcreate(H5P_DATASET_XFER), "creating a transfer property list"), H5Pclose);
  const size_t row = std::max(H5Tget_size(mem_type), H5Tget_size(file_type));
  const size_t bytes = std::clamp<size_t>(std::max<size_t>(1, rows) * row, size_t(1) << 16, size_t(1) << 20);
  check(H5Pset_buffer(dxpl, bytes, nullptr, nullptr), "setting the transfer buffer size");
  return dxpl;
}

// A 1-D table of `n` rows of `file_type`, with its "units" and "description" attributes, created
// but not written (the collective results writer fills it rank by rank). Chunked with an unlimited
// row dimension: that is the form that also works for 0 rows (h5py reads it as an empty array) and
// lets a later writer append. Chunks of ~1 MiB (table_chunk_rows), never filled with fill values
// (every row is written) unless the type has variable-length parts, which HDF5 requires a fill for. `parent` is the group's path for messages ("" for the root). Throws
// std::runtime_error on an HDF5 failure.
// `chunk_rows`: rows per chunk, 0 = table_chunk_rows(file_type, n).
inline Handle create_table(hid_t loc, const char* name, hid_t file_type, size_t n, const char* units,
                           const char* description, const std::string& parent = "", size_t chunk_rows = 0) {
  const std::string what = parent + "/" + name;
  Handle space = make_space({hsize_t(n)}, {H5S_UNLIMITED}, "creating the space of " + what);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "creating a property list"), H5Pclose);
  const hsize_t chunk = chunk_rows ? chunk_rows : table_chunk_rows(file_type, n);
  check(H5Pset_chunk(dcpl, 1, &chunk), "setting the chunk size of " + what);
  // No modification times in the object headers: the same tables make the same bytes, whenever written.
  check(H5Pset_obj_track_times(dcpl, false), "turning off the time tracking of " + what);
  if (!has_variable(file_type)) check(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "setting the fill time of " + what);
  // No chunk cache: rows are written once, in whole chunks (table_slab_rows), which then go from the
  // writer's buffer to the file instead of through a zeroed cache copy of each chunk.
  Handle dapl(check(H5Pcreate(H5P_DATASET_ACCESS), "creating a property list"), H5Pclose);
  check(H5Pset_chunk_cache(dapl, 0, 0, 1.0), "setting the chunk cache of " + what);
  Handle ds(check(H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT, dcpl, dapl), "creating dataset " + what),
            H5Dclose);
  attr_string(ds, "units", units);
  attr_string(ds, "description", description);
  return ds;
}

// create_table, then all `n` rows from `rows` (structs laid out as the memory type types.first).
inline void write_table(hid_t loc, const char* name, const std::pair<Handle, Handle>& types, const void* rows,
                 size_t n, const char* units, const char* description, const std::string& parent = "") {
  Handle ds = create_table(loc, name, types.second, n, units, description, parent);
  if (n > 0)
    check(H5Dwrite(ds, types.first, H5S_ALL, H5S_ALL, transfer_list(n, types.first, types.second), rows),
          "writing " + parent + "/" + name);
}

// create_table, then its `n` rows in slabs of up to `slab` rows: fill(first, count, buf) lays rows
// first .. first+count-1 out in `buf` (count × the memory type's size bytes). A table of millions of
// rows then never needs a second copy of itself in memory.
template <class Fill>
void write_table_slabs(hid_t loc, const char* name, const std::pair<Handle, Handle>& types, size_t n, const char* units,
                       const char* description, const std::string& parent, Fill fill, size_t slab = 65536) {
  Handle ds = create_table(loc, name, types.second, n, units, description, parent);
  slab = table_slab_rows(types.second, n, slab);
  const size_t row = H5Tget_size(types.first);
  std::vector<unsigned char> buf(std::min(n, slab) * row);
  const Handle dxpl = transfer_list(std::min(n, slab), types.first, types.second);
  Handle file_space(check(H5Dget_space(ds), "getting the space of " + parent + "/" + name), H5Sclose);
  for (size_t first = 0; first < n; first += slab) {
    const hsize_t start = first, count = std::min(slab, n - first);
    fill(first, size_t(count), buf.data());
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr),
          "selecting rows of " + parent + "/" + name);
    Handle mem_space = make_space({count}, {count}, "creating a slab space");
    check(H5Dwrite(ds, types.first, mem_space, file_space, dxpl, buf.data()), "writing " + parent + "/" + name);
  }
}

// write_table_slabs with one row per element of `records`: row_of(records[i], i) gives row i, a Row laid
// out as the memory type types.first.
template <class Row, class Record, class RowOf>
void write_table_rows(hid_t loc, const char* name, const std::pair<Handle, Handle>& types,
                      const std::vector<Record>& records, const char* units, const char* description,
                      const std::string& parent, RowOf row_of) {
  write_table_slabs(loc, name, types, records.size(), units, description, parent,
                    [&](size_t first, size_t count, void* buf) {
                      Row* rows = static_cast<Row*>(buf);
                      for (size_t i = first; i < first + count; ++i) rows[i - first] = row_of(records[i], i);
                    });
}

/// Whether `obj` has a link (dataset or group) or attribute called `name`.
inline bool has_link(hid_t obj, const char* name) { return H5Lexists(obj, name, H5P_DEFAULT) > 0; }
inline bool has_attr(hid_t obj, const char* name) { return H5Aexists(obj, name) > 0; }

/// A variable-length string attribute (std::runtime_error if absent or of another type).
inline std::string read_attr_string(hid_t obj, const char* name) {
  Handle a(check(H5Aopen(obj, name, H5P_DEFAULT), std::string("opening attribute ") + name), H5Aclose);
  Handle type = string_type();
  char* p = nullptr;
  check(H5Aread(a, type, &p), std::string("reading attribute ") + name);
  std::string v = p ? p : "";
  H5free_memory(p);
  return v;
}
/// An unsigned integer attribute, converted to u64.
inline uint64_t read_attr_u64(hid_t obj, const char* name) {
  Handle a(check(H5Aopen(obj, name, H5P_DEFAULT), std::string("opening attribute ") + name), H5Aclose);
  uint64_t v = 0;
  check(H5Aread(a, H5T_NATIVE_UINT64, &v), std::string("reading attribute ") + name);
  return v;
}

/// Reads 1-D compound dataset `name` into rows of `Row` through the memory type of `types`
/// (fields are matched by name, so a file with the fields in another order reads the same).
template <class Row>
std::vector<Row> read_table(hid_t loc, const char* name, const std::pair<Handle, Handle>& types) {
  Handle ds(check(H5Dopen2(loc, name, H5P_DEFAULT), std::string("opening dataset ") + name), H5Dclose);
  Handle space(check(H5Dget_space(ds), std::string("reading the space of ") + name), H5Sclose);
  if (H5Sget_simple_extent_ndims(space) != 1) throw std::runtime_error(std::string("dataset ") + name + " is not 1-D");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  std::vector<Row> rows(n);
  if (n > 0)
    check(H5Dread(ds, types.first, H5S_ALL, H5S_ALL, transfer_list(n, types.first, types.second), rows.data()),
          std::string("reading ") + name);
  return rows;
}

}  // namespace wh::h5
