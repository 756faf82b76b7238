// `gemmsim validate`: compare predictions with committed measurements.
#pragma once
