#include "engine_worker.h"
