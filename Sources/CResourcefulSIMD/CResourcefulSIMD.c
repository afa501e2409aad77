// The module is its header's inline functions alone; this file gives the target a source.
#include "CResourcefulSIMD.h"
