//===- main.cpp - A minimal application embedding the runtime -------------===//
//
// Loads a compiled Linformer artifact and its weights, runs the model on an
// input read from a .npy file, and writes the output as .npy:
//
//   linformer-embed model.lfa weights.safetensors x.npy y.npy [--threads N]
//
// x.npy is float32 [b, L, d] with L <= the compiled sequence length; the
// runtime pads it and fills the model's lengths/mask input. y.npy gets
// [b, L, d_out]. It uses nothing but the installed C++ wrapper
// (linformer/runtime.hpp), so it doubles as the test that the installed
// package is complete. The .npy code is deliberately tiny (float32, C order,
// version 1.0 headers written, 1.0/2.0 read).
//
//===----------------------------------------------------------------------===//

#include <linformer/runtime.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct FloatArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Reads a little-endian float32 C-order .npy file; throws on anything else.
FloatArray readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw std::runtime_error(path + ": not an .npy file");
  auto u8 = [&](size_t i) {
    return size_t(static_cast<unsigned char>(bytes[i]));
  };
  size_t len, start;
  if (bytes[6] == 1) {
    len = u8(8) | u8(9) << 8;
    start = 10;
  } else {
    len = u8(8) | u8(9) << 8 | u8(10) << 16 | u8(11) << 24;
    start = 12;
  }
  if (start + len > bytes.size())
    throw std::runtime_error(path + ": truncated header");
  std::string header = bytes.substr(start, len);
  if (header.find("'<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": expected a float32 C-order array");
  size_t open = header.find('(', header.find("'shape'"));
  size_t close = header.find(')', open);
  FloatArray a;
  std::stringstream dims(header.substr(open + 1, close - open - 1));
  std::string dim;
  while (std::getline(dims, dim, ','))
    if (dim.find_first_not_of(' ') != std::string::npos)
      a.shape.push_back(std::stoll(dim));
  size_t count = 1;
  for (int64_t d : a.shape)
    count *= size_t(d);
  if (bytes.size() - start - len != count * sizeof(float))
    throw std::runtime_error(path + ": data size does not match the shape");
  a.data.resize(count);
  std::memcpy(a.data.data(), bytes.data() + start + len, count * sizeof(float));
  return a;
}

void writeNpy(const std::string &path, const FloatArray &a) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i)
    header += std::to_string(a.shape[i]) + ", ";
  header += "), }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char *>(a.data.data()),
            std::streamsize(a.data.size() * sizeof(float)));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 5) {
    std::cerr << "usage: " << argv[0]
              << " model.lfa weights.safetensors x.npy y.npy [--threads N]\n";
    return 2;
  }
  int threads = 0;
  for (int i = 5; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::atoi(argv[i + 1]);
  try {
    lf::Module module = lf::Module::load(argv[1]);
    lf::Weights weights = lf::Weights::load(argv[2]);
    lf::Session session(module, weights, threads);

    // The first input without a role is the token input; the runtime fills
    // lengths/mask inputs itself.
    std::string inputName;
    for (const lf::TensorInfo &in : module.inputs())
      if (in.role == LF_ROLE_NONE) {
        inputName = in.name;
        break;
      }
    lf::TensorInfo out = module.outputs().at(0);
    FloatArray x = readNpy(argv[3]);
    if (x.shape.size() < 2)
      throw std::runtime_error("x.npy must be [b, L, ...]");

    FloatArray y;
    y.shape = out.shape;
    y.shape[0] = x.shape[0];
    y.shape[1] = x.shape[1];
    size_t count = 1;
    for (int64_t d : y.shape)
      count *= size_t(d);
    y.data.resize(count);

    session.run(
        {lf::TensorRef(inputName, LF_DTYPE_F32, x.shape, x.data.data())},
        {lf::TensorRef(out.name, LF_DTYPE_F32, y.shape, y.data.data())});
    writeNpy(argv[4], y);
    std::cout << "ran " << argv[1] << " on " << session.numThreads()
              << " threads (runtime " << lf_runtime_version() << ")\n";
  } catch (const lf::Error &e) {
    std::cerr << "error: " << lf_status_code_name(e.code()) << ": " << e.what()
              << "\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
