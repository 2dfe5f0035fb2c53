#include "views/views_gpu.h"

namespace kvscope::gui {

void ViewGpu::init() {
  textures_.create();
  error_.clear();
  ready_ = renderer_.init(error_);
}

void ViewGpu::release() {
  renderer_.release();
  textures_.release();
  ready_ = false;
}

}  // namespace kvscope::gui
