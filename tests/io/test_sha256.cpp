// SHA-256 against the FIPS 180-4 examples (NIST's published digests), fed
// whole and in uneven pieces, and the file digest cache: a second look
// reads the cache, a changed file is hashed again.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "io/file_hash.h"
#include "io/sha256.h"
#include "test_util.h"

namespace kvscope {
namespace {

struct Vector {
  std::string message, digest;
};

std::vector<Vector> fips_vectors() {
  return {{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
          {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
          {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
          {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnop"
           "qrstu",
           "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
          {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"}};
}

TEST(Sha256, MatchesTheStandardsExamples) {
  for (const auto& v : fips_vectors()) EXPECT_EQ(sha256_hex(v.message), v.digest) << v.message.size() << " bytes";
}

TEST(Sha256, PiecesGiveTheDigestOfTheWhole) {
  for (const auto& v : fips_vectors()) {
    for (std::size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 1000u}) {
      Sha256 h;
      for (std::size_t at = 0; at < v.message.size(); at += piece)
        h.update(v.message.data() + at, std::min(piece, v.message.size() - at));
      EXPECT_EQ(to_hex(h.finish()), v.digest) << v.message.size() << " bytes in pieces of " << piece;
    }
  }
  // Lengths around the padding boundary (55, 56 and 64 bytes need one more block).
  EXPECT_NE(sha256_hex(std::string(55, 'x')), sha256_hex(std::string(56, 'x')));
}

TEST(Sha256, RecognisesDigests) {
  EXPECT_TRUE(is_sha256_hex(fips_vectors()[1].digest));
  EXPECT_FALSE(is_sha256_hex("sha"));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'G')));
}

// The cache lives under $XDG_CACHE_HOME; each test gets its own.
class FileHash : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("XDG_CACHE_HOME", cache.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("XDG_CACHE_HOME"); }
  test::TempDir cache, dir;
};

TEST_F(FileHash, TheSecondLookReadsTheCacheAndAChangeIsHashedAgain) {
  const auto file = dir / "model.bin";
  const std::string bytes(3 << 20, 'k');  // several read chunks
  test::write_file(file, bytes);
  EXPECT_EQ(file_hash_cache_dir(), cache.path() / "kvscope" / "sha256");
  const FileDigest first = file_sha256(file);
  EXPECT_FALSE(first.from_cache);
  EXPECT_EQ(first.sha256, sha256_hex(bytes));
  EXPECT_EQ(first.bytes, bytes.size());
  // One entry in the cache folder, holding the digest.
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(file_hash_cache_dir())) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_NE(test::read_file(entries[0]).find(first.sha256), std::string::npos);
  const FileDigest second = file_sha256(file);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.sha256, first.sha256);
  // The cache, not the file, answers while the file is unchanged: a digest
  // planted in the entry comes back.
  const std::string planted(64, 'a');
  test::write_file(entries[0],
                   test::read_file(entries[0]).replace(test::read_file(entries[0]).find(first.sha256), 64, planted));
  EXPECT_EQ(file_sha256(file).sha256, planted);
  // Any write changes the key (size or time): the file is read again.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::string changed = bytes;
  changed[12345] = 'x';
  test::write_file(file, changed);
  const FileDigest after = file_sha256(file);
  EXPECT_FALSE(after.from_cache);
  EXPECT_EQ(after.sha256, sha256_hex(changed));
}

TEST_F(FileHash, AMissingFileIsNamed) {
  try {
    (void)file_sha256(dir / "absent.gguf");
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("absent.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvscope
