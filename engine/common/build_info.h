// Which kvscope this is: the version CMake's project() declares and the git
// commit the build was made from. Defined in a file the build generates
// (engine/build_info.cmake), rewritten only when the commit changes, so a
// new commit recompiles one file rather than the tree.
#pragma once

namespace kvscope {

const char* kvscope_version();  // "0.1.0"
// The full commit hash, with "-dirty" when tracked files differed from it at
// build time; "unknown" when the source is not a git checkout (a tarball).
const char* kvscope_commit();

}  // namespace kvscope
