/* HAL driver ABI, version 1.2.
 *
 * This header is everything a driver sees of HAL. A driver is a shared library
 * named libhal_driver_<name>.so that exports exactly one C symbol,
 * hal_driver_get_api(), returning a table of entry points. Nothing C++ crosses
 * this boundary: no std types, no exceptions, no RTTI.
 *
 * Stability rules (after the PJRT C API):
 *  - The driver table, the host table and every struct passed through them
 *    start with `struct_size`. They only ever grow at the end. A reader uses a
 *    field only if the writer's struct_size covers it (HAL_STRUCT_HAS).
 *  - A NULL entry in the driver table means "unsupported"; the core reports
 *    HAL_STATUS_UNSUPPORTED for it and never calls through it.
 *  - A change that is not append-only bumps HAL_ABI_MAJOR; the loader refuses
 *    a driver whose major differs from its own, naming both versions.
 *
 * Errors are values: every entry returns hal_status*, NULL on success. The
 * driver creates a status through hal_host_api.status_create (the core owns
 * its memory) and never frees one. Out-params are written only on success.
 *
 * Thread safety: every entry may be called from any thread at the same time,
 * unless its comment says otherwise. Destroying a handle while another thread
 * still uses it is the caller's error.
 */
#ifndef HAL_DRIVER_H_
#define HAL_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HAL_ABI_MAJOR 1
#define HAL_ABI_MINOR 2 /* 1: HAL_ARG_NONE; 2: graphs */

/* Symbol every driver exports, and its signature. */
#define HAL_DRIVER_ENTRY_POINT "hal_driver_get_api"

#if defined(_WIN32)
#define HAL_DRIVER_EXPORT __declspec(dllexport)
#else
#define HAL_DRIVER_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct written with `struct_size` bytes includes `field`. */
#define HAL_STRUCT_HAS(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ------------------------------------------------------------------------ */
/* Status                                                                    */

typedef enum HalStatusCode {
  HAL_STATUS_OK = 0,
  HAL_STATUS_INVALID_ARGUMENT = 1, /* bad value, size, dtype or handle */
  HAL_STATUS_NOT_FOUND = 2,        /* no such driver, device or kernel */
  HAL_STATUS_OUT_OF_MEMORY = 3,    /* device or pinned memory exhausted */
  HAL_STATUS_UNSUPPORTED = 4,      /* valid, but this driver lacks it */
  HAL_STATUS_UNAVAILABLE = 5,      /* resource busy or temporarily missing */
  HAL_STATUS_DEVICE_LOST = 6,      /* the device is unusable from now on */
  HAL_STATUS_ABORTED = 7,          /* work was cancelled */
  HAL_STATUS_INTERNAL = 8,         /* a bug in the driver or the core */
  HAL_STATUS_NOT_READY = 9,        /* work not complete yet (e.g. elapsed_ms) */
  HAL_STATUS_VERSION_MISMATCH = 10 /* core and driver ABI majors differ */
} hal_status_code;

/* Opaque; made by the host (hal_host_api.status_create), owned by the core. */
typedef struct hal_status hal_status;

typedef enum HalLogLevel {
  HAL_LOG_TRACE = 0,
  HAL_LOG_DEBUG = 1,
  HAL_LOG_INFO = 2,
  HAL_LOG_WARN = 3,
  HAL_LOG_ERROR = 4
} hal_log_level;

/* Services the core offers to a driver, handed over once in initialize().
 * The table stays valid until the process exits. */
typedef struct HalHostApi {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  /* Creates a status the driver returns from an entry. `message` is copied;
   * it may be NULL. Never returns NULL for a code other than OK. */
  hal_status* (*status_create)(hal_status_code code, const char* message);
  /* Logs through the core's logger (spdlog). `message` is copied. */
  void (*log)(hal_log_level level, const char* message);
} hal_host_api;

/* ------------------------------------------------------------------------ */
/* Handles. All are opaque and created/destroyed through the driver table.   */

typedef struct hal_device hal_device;
typedef struct hal_stream hal_stream;
typedef struct hal_event hal_event;
typedef struct hal_module hal_module;
typedef struct hal_kernel hal_kernel;
typedef struct hal_graph hal_graph; /* since ABI 1.2 */

/* A device address. Inside an allocation [p, p + bytes) every address is
 * valid, so p + offset names the byte at that offset. 0 is never valid. */
typedef uint64_t hal_devptr;
#define HAL_DEVPTR_NULL ((hal_devptr)0)

/* ------------------------------------------------------------------------ */
/* Data types                                                                */

typedef enum HalDtype {
  HAL_DTYPE_F32 = 0, /* required */
  HAL_DTYPE_F16 = 1,
  HAL_DTYPE_BF16 = 2,
  HAL_DTYPE_F64 = 3,
  HAL_DTYPE_I64 = 4, /* required */
  HAL_DTYPE_I32 = 5, /* required */
  HAL_DTYPE_I16 = 6,
  HAL_DTYPE_I8 = 7,
  HAL_DTYPE_U8 = 8,
  HAL_DTYPE_BOOL = 9, /* required; one byte, 0 or 1 */
  HAL_DTYPE_COUNT = 10
} hal_dtype;

#define HAL_DTYPE_BIT(dtype) (1u << (uint32_t)(dtype))
#define HAL_DTYPES_REQUIRED                                      \
  (HAL_DTYPE_BIT(HAL_DTYPE_F32) | HAL_DTYPE_BIT(HAL_DTYPE_I64) | \
   HAL_DTYPE_BIT(HAL_DTYPE_I32) | HAL_DTYPE_BIT(HAL_DTYPE_BOOL))

/* ------------------------------------------------------------------------ */
/* Device properties                                                         */

typedef enum HalCapability {
  HAL_CAP_TIMING_EVENTS = 1u << 0, /* events created with HAL_EVENT_TIMING */
  HAL_CAP_HOST_MAPPED_MEMORY = 1u << 1, /* a hal_devptr is a host address */
  HAL_CAP_PEER_COPY = 1u << 2,          /* D2D copies between devices */
  HAL_CAP_STREAM_PRIORITY = 1u << 3 /* priorities other than 0 take effect */
} hal_capability;

/* Filled by device_properties(). The caller sets struct_size to the size it
 * knows; the driver writes only the fields that size covers. Strings are
 * NUL-terminated and truncated to fit. */
typedef struct HalDeviceProperties {
  size_t struct_size;
  char name[128];
  char vendor[64];
  char driver_version[64];
  uint64_t total_memory;        /* bytes */
  uint64_t max_allocation_size; /* bytes; largest single mem_alloc */
  uint32_t compute_units;
  uint32_t dtypes;             /* HAL_DTYPE_BIT mask of supported dtypes */
  uint64_t capabilities;       /* hal_capability mask */
  uint32_t kernel_set_version; /* version of the standard kernel set offered */
  uint32_t min_alignment; /* every mem_alloc is aligned at least this much */
  int32_t stream_priority_low;  /* least urgent priority; 0 is the default */
  int32_t stream_priority_high; /* most urgent priority (<= low, as in CUDA) */
} hal_device_properties;

/* ------------------------------------------------------------------------ */
/* Copies, events, kernel arguments                                          */

typedef enum HalCopyKind {
  HAL_COPY_HOST_TO_DEVICE = 0,
  HAL_COPY_DEVICE_TO_HOST = 1,
  HAL_COPY_DEVICE_TO_DEVICE = 2,
  HAL_COPY_HOST_TO_HOST = 3
} hal_copy_kind;

typedef enum HalEventFlags {
  HAL_EVENT_DEFAULT = 0,
  HAL_EVENT_TIMING = 1u << 0 /* record a timestamp; needed by elapsed_ms */
} hal_event_flags;

#define HAL_MAX_RANK 8

/* A strided view of device memory. Element i = (i_0, …, i_{rank-1}) lives at
 * data + sum(i_k * strides[k]) * element_size. Strides are in elements, may be
 * 0 (broadcast) or negative; entries past `rank` are ignored. Rank 0 is a
 * scalar (one element). Any size may be 0 (empty tensor; `data` may then be
 * HAL_DEVPTR_NULL). */
typedef struct HalTensor {
  hal_devptr data;
  int32_t dtype; /* hal_dtype */
  int32_t rank;  /* 0 … HAL_MAX_RANK */
  int64_t sizes[HAL_MAX_RANK];
  int64_t strides[HAL_MAX_RANK];
} hal_tensor;

typedef enum HalArgKind {
  HAL_ARG_TENSOR = 1,
  HAL_ARG_I64 = 2, /* integer scalar (also bools and enums) */
  HAL_ARG_F64 = 3, /* floating-point scalar */
  HAL_ARG_NONE = 4 /* an optional argument left out (since ABI 1.1) */
} hal_arg_kind;

/* One tagged kernel argument. Which kinds a kernel takes, in which order, is
 * part of the kernel's definition (for the standard set: hal/kernels/). */
typedef struct HalArg {
  int32_t kind; /* hal_arg_kind */
  int32_t reserved;
  union {
    hal_tensor tensor;
    int64_t i64;
    double f64;
  } value;
} hal_arg;

/* ------------------------------------------------------------------------ */
/* The driver table                                                          */

typedef struct HalDriverApi {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;    /* short name, e.g. "cpu_ref"; static storage */
  const char* version; /* the driver's own version string; static storage */

  /* Called once by the core before any other entry (not thread-safe with
   * respect to itself). `host` outlives the driver. A failure here makes the
   * loader reject the driver with the returned message. */
  hal_status* (*initialize)(const hal_host_api* host);

  /* --- devices --- */

  /* Number of devices this driver can open; 0 is valid (no hardware). */
  hal_status* (*device_count)(int32_t* out_count);
  /* Opens device `ordinal` (0 … count-1, else INVALID_ARGUMENT). Opening the
   * same ordinal twice returns the same handle; the handle stays valid until
   * the process exits. */
  hal_status* (*device_open)(int32_t ordinal, hal_device** out_device);
  /* See hal_device_properties for struct_size handling. */
  hal_status* (*device_properties)(hal_device* device,
                                   hal_device_properties* out_properties);
  /* Free and total device memory in bytes. */
  hal_status* (*memory_info)(hal_device* device, uint64_t* out_free,
                             uint64_t* out_total);

  /* --- memory --- */

  /* Allocates `bytes` of device memory aligned to `alignment` (0 = the
   * device's min_alignment; otherwise a power of two, else INVALID_ARGUMENT).
   * bytes == 0 yields HAL_DEVPTR_NULL. OUT_OF_MEMORY when it does not fit;
   * INVALID_ARGUMENT above max_allocation_size. */
  hal_status* (*mem_alloc)(hal_device* device, uint64_t bytes,
                           uint64_t alignment, hal_devptr* out_ptr);
  /* Frees an allocation by its start address; HAL_DEVPTR_NULL is a no-op.
   * Any other address that mem_alloc did not return is INVALID_ARGUMENT.
   * The caller makes sure no queued work still uses the memory. */
  hal_status* (*mem_free)(hal_device* device, hal_devptr ptr);
  /* Pinned host memory: copies to or from it are asynchronous. */
  hal_status* (*host_alloc)(hal_device* device, uint64_t bytes, void** out_ptr);
  hal_status* (*host_free)(hal_device* device, void* ptr);

  /* --- streams: in-order queues --- */

  /* Priority between stream_priority_high and _low (else INVALID_ARGUMENT). */
  hal_status* (*stream_create)(hal_device* device, int32_t priority,
                               hal_stream** out_stream);
  /* Waits for the stream's work to finish, then destroys it. The default
   * stream cannot be destroyed (INVALID_ARGUMENT). */
  hal_status* (*stream_destroy)(hal_stream* stream);
  /* The device's default stream, owned by the device. */
  hal_status* (*stream_default)(hal_device* device, hal_stream** out_stream);
  /* Blocks until every operation enqueued so far has completed. Returns the
   * first error an operation of this stream hit while executing, once. */
  hal_status* (*stream_synchronize)(hal_stream* stream);
  /* *out_idle = 1 if every enqueued operation has completed, else 0. */
  hal_status* (*stream_query)(hal_stream* stream, int32_t* out_idle);
  /* Later work on `stream` waits until `event`'s last record completes.
   * Waiting on a never-recorded event is a no-op. Both must belong to the
   * same device, else INVALID_ARGUMENT. */
  hal_status* (*stream_wait_event)(hal_stream* stream, hal_event* event);

  /* --- events --- */

  hal_status* (*event_create)(hal_device* device, uint32_t flags,
                              hal_event** out_event);
  /* The event must not have pending waiters on other streams. */
  hal_status* (*event_destroy)(hal_event* event);
  /* Captures the work enqueued on `stream` so far; re-recording replaces it. */
  hal_status* (*event_record)(hal_event* event, hal_stream* stream);
  /* *out_complete = 1 if the recorded work has completed (or never recorded).
   */
  hal_status* (*event_query)(hal_event* event, int32_t* out_complete);
  hal_status* (*event_synchronize)(hal_event* event);
  /* Milliseconds between two completed records of timing events.
   * UNSUPPORTED if either lacks HAL_EVENT_TIMING; NOT_READY if either has not
   * completed; INVALID_ARGUMENT if either was never recorded. */
  hal_status* (*event_elapsed_ms)(hal_event* start, hal_event* end,
                                  float* out_ms);

  /* --- transfers: stream operations --- */

  /* Copies `bytes` from `src` to `dst`; a host side is a host address cast to
   * uint64_t. Host memory from host_alloc makes the copy asynchronous (in
   * stream order); any other host memory is copied before the call returns,
   * after the stream's earlier work. Device ranges must lie inside one
   * allocation each (INVALID_ARGUMENT otherwise). Overlapping ranges are
   * copied as if through a temporary (memmove semantics). */
  hal_status* (*copy)(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                      uint64_t src, uint64_t bytes);
  /* Writes `pattern` (1, 2, 4 or 8 bytes) repeatedly over [dst, dst+bytes);
   * bytes must be a multiple of pattern_bytes. The pattern is copied. */
  hal_status* (*fill)(hal_stream* stream, hal_devptr dst, const void* pattern,
                      uint32_t pattern_bytes, uint64_t bytes);

  /* --- kernels --- */

  /* Loads driver-native code. `format` names it ("spirv", "stablehlo",
   * "host-so", …); an unknown format is UNSUPPORTED. `data` is copied. */
  hal_status* (*module_load)(hal_device* device, const char* format,
                             const void* data, uint64_t size,
                             hal_module** out_module);
  /* Kernels of the module become invalid. */
  hal_status* (*module_unload)(hal_module* module);
  /* Finds a kernel by name; module == NULL means the standard kernel set.
   * NOT_FOUND names the kernel. The kernel lives as long as its module (or,
   * for the standard set, its device); it is never destroyed on its own. */
  hal_status* (*kernel_lookup)(hal_device* device, hal_module* module,
                               const char* name, hal_kernel** out_kernel);
  /* Enqueues the kernel. Arguments are checked before anything is enqueued
   * (count, kinds, dtypes, ranks, shapes, memory bounds): a bad call returns
   * INVALID_ARGUMENT (or UNSUPPORTED for a valid but unsupported dtype) and
   * changes nothing. `args` is copied; tensor memory must stay valid until the
   * operation completes. */
  hal_status* (*launch)(hal_stream* stream, hal_kernel* kernel,
                        const hal_arg* args, uint32_t num_args);

  /* --- graphs (since ABI 1.2) ---
   *
   * Stream capture, as in CUDA graphs. Between begin and end capture, the
   * copies, fills, launches, event records and event waits enqueued on the
   * stream are checked as usual and recorded into a graph instead of run;
   * graph_launch runs the recording on any stream of the device, any number
   * of times, in that stream's order. Addresses, scalars and fill patterns
   * are fixed at capture time. Recorded events are recorded again, on the
   * launching stream, at their point of each launch; recorded waits wait on
   * each event's record at launch time.
   *
   * A driver implements all four entries or none: without them the core
   * records the calls itself and replays them one by one, so every driver
   * has graphs. The core enforces, before any of these entries is called:
   * the default stream is never captured; while a stream captures, it is
   * not synchronized or queried, copies to or from host memory are refused,
   * and it is not destroyed. */

  /* Starts capturing `stream`. INVALID_ARGUMENT if it already captures. */
  hal_status* (*stream_begin_capture)(hal_stream* stream);
  /* Ends the capture and returns what it recorded (possibly nothing) as a
   * new graph; the stream runs work again from here. INVALID_ARGUMENT if the
   * stream does not capture. */
  hal_status* (*stream_end_capture)(hal_stream* stream, hal_graph** out_graph);
  /* Enqueues one run of the graph on `stream` (a stream of the graph's
   * device that does not capture, else INVALID_ARGUMENT). The memory the
   * graph uses must stay valid until the run completes. */
  hal_status* (*graph_launch)(hal_graph* graph, hal_stream* stream);
  /* Destroys the graph. UNAVAILABLE, destroying nothing, while a launch of
   * it has not completed. */
  hal_status* (*graph_destroy)(hal_graph* graph);
} hal_driver_api;

/* Every entry of hal_driver_api, in table order: X(field) per entry. Code
 * that treats all entries alike (the validation layer's interposition, the
 * drivers' table helper, the tests that check a driver implements them)
 * expands this list rather than spelling the entries out, so a new entry is
 * added to the struct above and here, and nowhere else. */
#define HAL_DRIVER_API_ENTRIES(X) \
  X(initialize)                   \
  X(device_count)                 \
  X(device_open)                  \
  X(device_properties)            \
  X(memory_info)                  \
  X(mem_alloc)                    \
  X(mem_free)                     \
  X(host_alloc)                   \
  X(host_free)                    \
  X(stream_create)                \
  X(stream_destroy)               \
  X(stream_default)               \
  X(stream_synchronize)           \
  X(stream_query)                 \
  X(stream_wait_event)            \
  X(event_create)                 \
  X(event_destroy)                \
  X(event_record)                 \
  X(event_query)                  \
  X(event_synchronize)            \
  X(event_elapsed_ms)             \
  X(copy)                         \
  X(fill)                         \
  X(module_load)                  \
  X(module_unload)                \
  X(kernel_lookup)                \
  X(launch)                       \
  X(stream_begin_capture)         \
  X(stream_end_capture)           \
  X(graph_launch)                 \
  X(graph_destroy)

/* The list names every entry field, from `initialize` to the end. Each entry
   adds `+1` to a leading 0, so the term stays bare. */
#define HAL_DRIVER_API_COUNT_ONE_(field) \
  +1 /* NOLINT(bugprone-macro-parentheses) */
#ifdef __cplusplus
static_assert
#else
_Static_assert
#endif
    (offsetof(hal_driver_api, initialize) +
             (0 HAL_DRIVER_API_ENTRIES(HAL_DRIVER_API_COUNT_ONE_)) *
                 sizeof(hal_status * (*)(void)) ==
         sizeof(hal_driver_api),
     "HAL_DRIVER_API_ENTRIES and hal_driver_api disagree");
#undef HAL_DRIVER_API_COUNT_ONE_

/* The one symbol a driver exports. `host_abi_major` is the core's
 * HAL_ABI_MAJOR; a driver may serve an older table for an older core, or
 * return its own and let the loader refuse it. NULL means "cannot serve". */
typedef const hal_driver_api* (*hal_driver_get_api_fn)(uint32_t host_abi_major);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HAL_DRIVER_H_ */
