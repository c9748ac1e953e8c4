#pragma once
#define LAYOVER_VERSION "0.1.0"
