/* The skeleton driver of docs/writing-a-driver.md: the smallest complete
 * HAL driver, a starting point to copy. One device whose memory is host
 * memory, streams that run every operation at once (which is in order, and
 * complete when the call returns), events that are complete when recorded,
 * and one standard kernel, fill. hal-certify lists the other kernels as
 * missing.
 *
 * It includes only hal/driver.h and hal/standard_kernels.h and links
 * nothing of HAL: find_package(hal) gives it hal::driver_abi.
 *
 * Every entry checks its arguments and answers a misuse with
 * INVALID_ARGUMENT, as the conformance suite's Errors area demands: handles
 * are checked against registries of live objects, device ranges against
 * the live allocations.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/driver.h"
#include "hal/standard_kernels.h"

#define SKELETON_MEMORY (1ull << 30) /* the device's capacity */
#define SKELETON_ALIGNMENT 64u

struct hal_device {
  int ordinal;
};
struct hal_stream {
  int is_default;
};
struct hal_event {
  uint32_t flags;
};
struct hal_kernel {
  const char* name;
};

static const hal_host_api* host;
static struct hal_device the_device = {0};
static struct hal_stream default_stream = {1};
static struct hal_kernel fill_kernel = {HAL_KERNEL_FILL};

static hal_status* error(hal_status_code code, const char* message) {
  return host->status_create(code, message);
}
static hal_status* invalid(const char* message) {
  return error(HAL_STATUS_INVALID_ARGUMENT, message);
}

/* --- Registries: what is live, under one lock ----------------------------- */

/* A set of live objects: an address and, for memory, a size. */
struct entry {
  uintptr_t start;
  uint64_t size;
};
struct registry {
  struct entry* entries;
  size_t count, capacity;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct registry allocations, host_allocations, streams, events;
static uint64_t used; /* bytes of device memory allocated */

static int registry_add(struct registry* r, uintptr_t start, uint64_t size) {
  if (r->count == r->capacity) {
    size_t capacity = r->capacity ? 2 * r->capacity : 64;
    struct entry* grown = realloc(r->entries, capacity * sizeof *grown);
    if (grown == NULL) return 0;
    r->entries = grown;
    r->capacity = capacity;
  }
  r->entries[r->count++] = (struct entry){start, size};
  return 1;
}

/* Index of the entry starting at `start`, or -1. */
static long registry_find(const struct registry* r, uintptr_t start) {
  for (size_t i = 0; i < r->count; ++i) {
    if (r->entries[i].start == start) return (long)i;
  }
  return -1;
}

static int registry_has(struct registry* r, const void* handle) {
  pthread_mutex_lock(&lock);
  int found = registry_find(r, (uintptr_t)handle) >= 0;
  pthread_mutex_unlock(&lock);
  return found;
}

static void registry_remove(struct registry* r, long index) {
  r->entries[index] = r->entries[--r->count];
}

/* True when [address, address + bytes) lies inside one live allocation. */
static int in_allocation(uint64_t address, uint64_t bytes) {
  int inside = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < allocations.count && !inside; ++i) {
    const struct entry* a = &allocations.entries[i];
    inside = address >= a->start && bytes <= a->size &&
             address - a->start <= a->size - bytes;
  }
  pthread_mutex_unlock(&lock);
  return inside;
}

static int valid_device(const hal_device* device) {
  return device == &the_device;
}
static int valid_stream(hal_stream* stream) {
  return stream == &default_stream || registry_has(&streams, stream);
}
static int valid_event(hal_event* event) {
  return registry_has(&events, event);
}

/* --- Devices ----------------------------------------------------------------
 */

static hal_status* initialize(const hal_host_api* host_api) {
  host = host_api;
  return NULL;
}

static hal_status* device_count(int32_t* out_count) {
  if (out_count == NULL) return invalid("out_count is NULL");
  *out_count = 1;
  return NULL;
}

static hal_status* device_open(int32_t ordinal, hal_device** out_device) {
  if (out_device == NULL) return invalid("out_device is NULL");
  if (ordinal != 0) return invalid("the skeleton has one device, ordinal 0");
  *out_device = &the_device;
  return NULL;
}

/* Writes `field` only if the caller's struct_size covers it. */
#define SET_PROPERTY(props, field, value)                  \
  if (HAL_STRUCT_HAS(props, hal_device_properties, field)) \
  (props)->field = (value)

static hal_status* device_properties(hal_device* device,
                                     hal_device_properties* props) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (props == NULL) return invalid("out_properties is NULL");
  if (HAL_STRUCT_HAS(props, hal_device_properties, name)) {
    snprintf(props->name, sizeof props->name, "skeleton device");
  }
  if (HAL_STRUCT_HAS(props, hal_device_properties, vendor)) {
    snprintf(props->vendor, sizeof props->vendor, "HAL documentation");
  }
  if (HAL_STRUCT_HAS(props, hal_device_properties, driver_version)) {
    snprintf(props->driver_version, sizeof props->driver_version, "0.1.0");
  }
  SET_PROPERTY(props, total_memory, SKELETON_MEMORY);
  SET_PROPERTY(props, max_allocation_size, SKELETON_MEMORY);
  SET_PROPERTY(props, compute_units, 1);
  SET_PROPERTY(props, dtypes, HAL_DTYPES_REQUIRED);
  /* Device addresses are host addresses; nothing else. */
  SET_PROPERTY(props, capabilities, HAL_CAP_HOST_MAPPED_MEMORY);
  SET_PROPERTY(props, kernel_set_version, HAL_KERNEL_SET_VERSION);
  SET_PROPERTY(props, min_alignment, SKELETON_ALIGNMENT);
  SET_PROPERTY(props, stream_priority_low, 0);
  SET_PROPERTY(props, stream_priority_high, 0);
  return NULL;
}

static hal_status* memory_info(hal_device* device, uint64_t* out_free,
                               uint64_t* out_total) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (out_free == NULL || out_total == NULL) return invalid("NULL out-param");
  pthread_mutex_lock(&lock);
  *out_free = SKELETON_MEMORY - used;
  pthread_mutex_unlock(&lock);
  *out_total = SKELETON_MEMORY;
  return NULL;
}

/* --- Memory -----------------------------------------------------------------
 */

static hal_status* mem_alloc(hal_device* device, uint64_t bytes,
                             uint64_t alignment, hal_devptr* out_ptr) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (out_ptr == NULL) return invalid("out_ptr is NULL");
  if (alignment & (alignment - 1)) return invalid("alignment not a power of 2");
  if (bytes > SKELETON_MEMORY) return invalid("above max_allocation_size");
  if (bytes == 0) {
    *out_ptr = HAL_DEVPTR_NULL;
    return NULL;
  }
  if (alignment < SKELETON_ALIGNMENT) alignment = SKELETON_ALIGNMENT;
  pthread_mutex_lock(&lock);
  const int fits = used + bytes <= SKELETON_MEMORY;
  if (fits) used += bytes;
  pthread_mutex_unlock(&lock);
  if (!fits) return error(HAL_STATUS_OUT_OF_MEMORY, "device memory is full");
  /* aligned_alloc wants a size that is a multiple of the alignment. */
  void* p =
      aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  pthread_mutex_lock(&lock);
  const int recorded =
      p != NULL && registry_add(&allocations, (uintptr_t)p, bytes);
  if (!recorded) used -= bytes;
  pthread_mutex_unlock(&lock);
  if (!recorded) {
    free(p);
    return error(HAL_STATUS_OUT_OF_MEMORY, "host memory exhausted");
  }
  *out_ptr = (hal_devptr)(uintptr_t)p;
  return NULL;
}

static hal_status* mem_free(hal_device* device, hal_devptr ptr) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (ptr == HAL_DEVPTR_NULL) return NULL;
  pthread_mutex_lock(&lock);
  const long index = registry_find(&allocations, (uintptr_t)ptr);
  if (index >= 0) {
    used -= allocations.entries[index].size;
    registry_remove(&allocations, index);
  }
  pthread_mutex_unlock(&lock);
  if (index < 0) return invalid("not the start of a live allocation");
  free((void*)(uintptr_t)ptr);
  return NULL;
}

/* Pinned memory is ordinary memory here: copies are synchronous anyway. */
static hal_status* host_alloc(hal_device* device, uint64_t bytes,
                              void** out_ptr) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (out_ptr == NULL) return invalid("out_ptr is NULL");
  void* p = malloc(bytes ? bytes : 1);
  pthread_mutex_lock(&lock);
  const int recorded =
      p != NULL && registry_add(&host_allocations, (uintptr_t)p, bytes);
  pthread_mutex_unlock(&lock);
  if (!recorded) {
    free(p);
    return error(HAL_STATUS_OUT_OF_MEMORY, "host memory exhausted");
  }
  *out_ptr = p;
  return NULL;
}

static hal_status* host_free(hal_device* device, void* ptr) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (ptr == NULL) return NULL;
  pthread_mutex_lock(&lock);
  const long index = registry_find(&host_allocations, (uintptr_t)ptr);
  if (index >= 0) registry_remove(&host_allocations, index);
  pthread_mutex_unlock(&lock);
  if (index < 0) return invalid("not live pinned memory");
  free(ptr);
  return NULL;
}

/* --- Streams and events: everything completes at once ----------------------
 */

/* Creates a registered object of `bytes`; NULL when memory runs out. */
static void* create_object(struct registry* r, size_t bytes) {
  void* object = calloc(1, bytes);
  pthread_mutex_lock(&lock);
  const int recorded = object != NULL && registry_add(r, (uintptr_t)object, 0);
  pthread_mutex_unlock(&lock);
  if (!recorded) {
    free(object);
    return NULL;
  }
  return object;
}

static hal_status* destroy_object(struct registry* r, void* object) {
  pthread_mutex_lock(&lock);
  const long index = object ? registry_find(r, (uintptr_t)object) : -1;
  if (index >= 0) registry_remove(r, index);
  pthread_mutex_unlock(&lock);
  if (index < 0) return invalid("not a live object of this driver");
  free(object);
  return NULL;
}

static hal_status* stream_create(hal_device* device, int32_t priority,
                                 hal_stream** out_stream) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (out_stream == NULL) return invalid("out_stream is NULL");
  if (priority != 0) return invalid("the skeleton has one priority, 0");
  hal_stream* stream = create_object(&streams, sizeof *stream);
  if (stream == NULL) return error(HAL_STATUS_OUT_OF_MEMORY, "no memory");
  *out_stream = stream;
  return NULL;
}

static hal_status* stream_destroy(hal_stream* stream) {
  if (stream == &default_stream) {
    return invalid("the default stream cannot be destroyed");
  }
  return destroy_object(&streams, stream);
}

static hal_status* stream_default(hal_device* device, hal_stream** out_stream) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (out_stream == NULL) return invalid("out_stream is NULL");
  *out_stream = &default_stream;
  return NULL;
}

static hal_status* stream_synchronize(hal_stream* stream) {
  return valid_stream(stream) ? NULL : invalid("not a live stream");
}

static hal_status* stream_query(hal_stream* stream, int32_t* out_idle) {
  if (!valid_stream(stream)) return invalid("not a live stream");
  if (out_idle == NULL) return invalid("out_idle is NULL");
  *out_idle = 1;
  return NULL;
}

static hal_status* stream_wait_event(hal_stream* stream, hal_event* event) {
  if (!valid_stream(stream)) return invalid("not a live stream");
  return valid_event(event) ? NULL : invalid("not a live event");
}

static hal_status* event_create(hal_device* device, uint32_t flags,
                                hal_event** out_event) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (out_event == NULL) return invalid("out_event is NULL");
  if (flags & ~(uint32_t)HAL_EVENT_TIMING) return invalid("unknown flags");
  hal_event* event = create_object(&events, sizeof *event);
  if (event == NULL) return error(HAL_STATUS_OUT_OF_MEMORY, "no memory");
  event->flags = flags;
  *out_event = event;
  return NULL;
}

static hal_status* event_destroy(hal_event* event) {
  return destroy_object(&events, event);
}

static hal_status* event_record(hal_event* event, hal_stream* stream) {
  if (!valid_event(event)) return invalid("not a live event");
  return valid_stream(stream) ? NULL : invalid("not a live stream");
}

static hal_status* event_query(hal_event* event, int32_t* out_complete) {
  if (!valid_event(event)) return invalid("not a live event");
  if (out_complete == NULL) return invalid("out_complete is NULL");
  *out_complete = 1;
  return NULL;
}

static hal_status* event_synchronize(hal_event* event) {
  return valid_event(event) ? NULL : invalid("not a live event");
}

/* No HAL_CAP_TIMING_EVENTS: elapsed time is unsupported. */
static hal_status* event_elapsed_ms(hal_event* start, hal_event* end,
                                    float* out_ms) {
  if (!valid_event(start) || !valid_event(end)) {
    return invalid("not a live event");
  }
  if (out_ms == NULL) return invalid("out_ms is NULL");
  return error(HAL_STATUS_UNSUPPORTED, "the skeleton has no timing events");
}

/* --- Transfers --------------------------------------------------------------
 */

static hal_status* copy(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                        uint64_t src, uint64_t bytes) {
  if (!valid_stream(stream)) return invalid("not a live stream");
  if ((uint32_t)kind > HAL_COPY_HOST_TO_HOST) return invalid("unknown kind");
  if (bytes == 0) return NULL;
  if (dst == 0 || src == 0) return invalid("NULL address");
  const int device_dst =
      kind == HAL_COPY_HOST_TO_DEVICE || kind == HAL_COPY_DEVICE_TO_DEVICE;
  const int device_src =
      kind == HAL_COPY_DEVICE_TO_HOST || kind == HAL_COPY_DEVICE_TO_DEVICE;
  if ((device_dst && !in_allocation(dst, bytes)) ||
      (device_src && !in_allocation(src, bytes))) {
    return invalid("a device range is not inside one allocation");
  }
  memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, bytes);
  return NULL;
}

static hal_status* fill(hal_stream* stream, hal_devptr dst, const void* pattern,
                        uint32_t pattern_bytes, uint64_t bytes) {
  if (!valid_stream(stream)) return invalid("not a live stream");
  if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 &&
      pattern_bytes != 8) {
    return invalid("pattern_bytes must be 1, 2, 4 or 8");
  }
  if (pattern == NULL) return invalid("pattern is NULL");
  if (bytes % pattern_bytes != 0) return invalid("not a multiple of pattern");
  if (bytes == 0) return NULL;
  if (!in_allocation(dst, bytes)) return invalid("outside an allocation");
  for (uint64_t at = 0; at < bytes; at += pattern_bytes) {
    memcpy((char*)(uintptr_t)dst + at, pattern, pattern_bytes);
  }
  return NULL;
}

/* --- Kernels: the standard set's fill, nothing else -------------------------
 */

static hal_status* module_load(hal_device* device, const char* format,
                               const void* data, uint64_t size,
                               hal_module** out_module) {
  (void)data;
  (void)size;
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (format == NULL || out_module == NULL) return invalid("NULL argument");
  return error(HAL_STATUS_UNSUPPORTED, "the skeleton loads no modules");
}

static hal_status* module_unload(hal_module* module) {
  (void)module;
  return invalid("the skeleton has no modules");
}

static hal_status* kernel_lookup(hal_device* device, hal_module* module,
                                 const char* name, hal_kernel** out_kernel) {
  if (!valid_device(device)) return invalid("not a skeleton device");
  if (module != NULL) return invalid("the skeleton has no modules");
  if (name == NULL || out_kernel == NULL) return invalid("NULL argument");
  if (strcmp(name, HAL_KERNEL_FILL) != 0) {
    char message[160];
    snprintf(message, sizeof message, "the skeleton has no kernel %s", name);
    return error(HAL_STATUS_NOT_FOUND, message);
  }
  *out_kernel = &fill_kernel;
  return NULL;
}

static size_t element_size(int32_t dtype) {
  return dtype == HAL_DTYPE_I64 ? 8 : dtype == HAL_DTYPE_BOOL ? 1 : 4;
}

/* fill(out, value): every element of the strided view `out` = value. */
static hal_status* launch(hal_stream* stream, hal_kernel* kernel,
                          const hal_arg* args, uint32_t num_args) {
  if (!valid_stream(stream)) return invalid("not a live stream");
  if (kernel != &fill_kernel) return invalid("not a kernel of this driver");
  if (args == NULL) return invalid("args is NULL");
  if (num_args != 2) return invalid("fill takes 2 arguments");
  if (args[0].kind != HAL_ARG_TENSOR) return invalid("out must be a tensor");
  if (args[1].kind != HAL_ARG_F64 && args[1].kind != HAL_ARG_I64) {
    return invalid("value must be a scalar");
  }
  const hal_tensor* out = &args[0].value.tensor;
  if (out->dtype < 0 || out->dtype >= HAL_DTYPE_COUNT) {
    return invalid("unknown dtype");
  }
  if (!(HAL_DTYPES_REQUIRED & HAL_DTYPE_BIT(out->dtype))) {
    return error(HAL_STATUS_UNSUPPORTED,
                 "the skeleton has the required "
                 "dtypes only");
  }
  if (out->rank < 0 || out->rank > HAL_MAX_RANK) return invalid("bad rank");
  /* The lowest and highest element the view reaches, for the bounds. */
  int64_t count = 1, low = 0, high = 0;
  for (int d = 0; d < out->rank; ++d) {
    if (out->sizes[d] < 0) return invalid("negative size");
    count *= out->sizes[d];
    const int64_t reach = (out->sizes[d] - 1) * out->strides[d];
    if (reach < 0)
      low += reach;
    else
      high += reach;
  }
  if (count == 0) return NULL;
  if (out->data == HAL_DEVPTR_NULL) return invalid("data is NULL");
  const size_t size = element_size(out->dtype);
  const uint64_t first = out->data + (uint64_t)(low * (int64_t)size);
  if (!in_allocation(first, (uint64_t)(high - low + 1) * size)) {
    return invalid("the view reaches outside its allocation");
  }
  const double f = args[1].kind == HAL_ARG_F64 ? args[1].value.f64
                                               : (double)args[1].value.i64;
  const int64_t i = args[1].kind == HAL_ARG_I64 ? args[1].value.i64
                                                : (int64_t)args[1].value.f64;
  union {
    float f32;
    int32_t i32;
    int64_t i64;
    uint8_t b;
  } value;
  switch (out->dtype) {
    case HAL_DTYPE_F32:
      value.f32 = (float)f;
      break;
    case HAL_DTYPE_I32:
      value.i32 = (int32_t)i;
      break;
    case HAL_DTYPE_I64:
      value.i64 = i;
      break;
    default:
      value.b = f != 0;
      break;
  }
  /* Walk every index of the view, last dimension fastest. */
  int64_t index[HAL_MAX_RANK] = {0};
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int d = 0; d < out->rank; ++d) offset += index[d] * out->strides[d];
    memcpy((char*)(uintptr_t)out->data + offset * (int64_t)size, &value, size);
    for (int d = out->rank - 1; d >= 0 && ++index[d] == out->sizes[d]; --d) {
      index[d] = 0;
    }
  }
  return NULL;
}

/* --- The one exported symbol ------------------------------------------------
 */

static const hal_driver_api api = {
    .struct_size = sizeof(hal_driver_api),
    .abi_major = HAL_ABI_MAJOR,
    .abi_minor = HAL_ABI_MINOR,
    .name = "skeleton",
    .version = "0.1.0",
    .initialize = initialize,
    .device_count = device_count,
    .device_open = device_open,
    .device_properties = device_properties,
    .memory_info = memory_info,
    .mem_alloc = mem_alloc,
    .mem_free = mem_free,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_default = stream_default,
    .stream_synchronize = stream_synchronize,
    .stream_query = stream_query,
    .stream_wait_event = stream_wait_event,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_query = event_query,
    .event_synchronize = event_synchronize,
    .event_elapsed_ms = event_elapsed_ms,
    .copy = copy,
    .fill = fill,
    .module_load = module_load,
    .module_unload = module_unload,
    .kernel_lookup = kernel_lookup,
    .launch = launch,
};

HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t host_abi_major) {
  /* A table for another major would be refused; say so by returning NULL. */
  return host_abi_major == HAL_ABI_MAJOR ? &api : NULL;
}
