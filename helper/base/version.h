#pragma once
// The version is written once, in python/layover/_version.py; the Makefile
// reads it and passes -DLAYOVER_VERSION="x.y.z" to every compile.
#ifndef LAYOVER_VERSION
#error "LAYOVER_VERSION is set by the Makefile from python/layover/_version.py"
#endif
