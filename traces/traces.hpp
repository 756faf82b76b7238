// Trace writers and run reports (issue: trace visualisation). Nothing here yet.
#pragma once
