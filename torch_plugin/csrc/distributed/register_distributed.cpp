// hal::_attach_process_group_backend, the one operator torch_hal.distributed
// needs to create a ProcessGroupHAL without linking libtorch_python: c10d's
// Backend has no TorchScript boxing, its ProcessGroup has. Python builds a
// carrier ProcessGroup holding the host (gloo) backend for CPU; the operator
// adds a ProcessGroupHAL over that host backend for the hal device type, and
// Python hands `carrier._get_backend("hal")` to init_process_group.
#include <torch/library.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "distributed/process_group_hal.hpp"

namespace torch_hal {
namespace {

void attach_process_group_backend(
    const c10::intrusive_ptr<c10d::ProcessGroup>& carrier) {
  auto host = carrier->getBackend(c10::DeviceType::CPU);
  carrier->setBackend(c10::DeviceType::PrivateUse1,
                      c10d::ProcessGroup::BackendType::CUSTOM,
                      c10::make_intrusive<ProcessGroupHAL>(
                          host, carrier->getRank(), carrier->getSize()));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(hal, m) {
  m.def(
      "_attach_process_group_backend(__torch__.torch.classes.c10d.ProcessGroup "
      "carrier) -> ()",
      &attach_process_group_backend);
}

}  // namespace torch_hal
