//===- Npy.cpp - NumPy .npy files -------------------------------*- C++ -*-===//

#include "tessel/Support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace tessel;

static constexpr char kMagic[] = "\x93NUMPY";

int64_t NpyArray::getNumElements() const {
  // parseNpy accepts only shapes whose element count fits the file, except
  // that any size goes next to a zero one.
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

unsigned NpyArray::getElementBytes() const {
  unsigned bytes = 0;
  llvm::StringRef(dtype).drop_front(2).getAsInteger(10, bytes);
  return bytes;
}

static llvm::Error npyError(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError("'" + path + "': " + message);
}

/// The value of `'key': value` in the header dictionary.
static std::optional<llvm::StringRef> headerField(llvm::StringRef header,
                                                  llvm::StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  return rest.ltrim();
}

llvm::Expected<NpyArray> tessel::readNpy(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return npyError(path, "cannot read: " + file.getError().message());
  return parseNpy((*file)->getBuffer(), path);
}

llvm::Expected<NpyArray> tessel::parseNpy(llvm::StringRef bytes,
                                          llvm::StringRef path) {
  if (bytes.size() < 10 || !bytes.starts_with(llvm::StringRef(kMagic, 6)))
    return npyError(path, "not a .npy file");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(path, "truncated header");
    headerLength =
        uint32_t(uint8_t(bytes[8])) | uint32_t(uint8_t(bytes[9])) << 8 |
        uint32_t(uint8_t(bytes[10])) << 16 | uint32_t(uint8_t(bytes[11])) << 24;
    headerStart = 12;
  } else {
    return npyError(path, "unsupported .npy version " + llvm::Twine(major));
  }
  if (headerStart + headerLength > bytes.size())
    return npyError(path, "truncated header");
  llvm::StringRef header = bytes.substr(headerStart, headerLength);

  NpyArray array;
  std::optional<llvm::StringRef> descr = headerField(header, "descr");
  std::optional<llvm::StringRef> order = headerField(header, "fortran_order");
  std::optional<llvm::StringRef> shape = headerField(header, "shape");
  if (!descr || !order || !shape || !descr->consume_front("'"))
    return npyError(path, "malformed header");
  array.dtype = descr->take_until([](char c) { return c == '\''; }).str();
  if (array.dtype.size() > 1 && array.dtype[0] == '=')
    array.dtype[0] = '<';
  if (order->starts_with("True"))
    return npyError(path, "Fortran-order arrays are not supported; save a "
                          "C-order array (numpy.ascontiguousarray)");
  if (array.dtype.size() < 3 || array.dtype[0] == '>' ||
      !llvm::is_contained({'f', 'i', 'u', 'b'}, array.dtype[1]) ||
      !llvm::is_contained({1u, 2u, 4u, 8u}, array.getElementBytes()))
    return npyError(path, "unsupported dtype '" + array.dtype +
                              "' (little-endian numbers only)");
  if (!shape->consume_front("("))
    return npyError(path, "malformed shape");
  llvm::StringRef dims = shape->take_until([](char c) { return c == ')'; });
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size < 0)
      return npyError(path, "malformed shape '" + dims + "'");
    array.shape.push_back(size);
  }
  // The byte count is computed with overflow checks: a header may claim any
  // shape, and a product that wraps around could match a short file.
  uint64_t dataBytes = 0;
  if (!llvm::is_contained(array.shape, 0)) {
    dataBytes = array.getElementBytes();
    for (int64_t size : array.shape) {
      bool overflow = false;
      dataBytes =
          llvm::SaturatingMultiply(dataBytes, uint64_t(size), &overflow);
      if (overflow || dataBytes > bytes.size())
        return npyError(path, "its shape (" + dims +
                                  ") needs more bytes than the file holds");
    }
  }
  llvm::StringRef data = bytes.drop_front(headerStart + headerLength);
  if (data.size() != dataBytes)
    return npyError(path, "holds " + llvm::Twine(data.size()) +
                              " data bytes, its header says " +
                              llvm::Twine(dataBytes));
  array.data.assign(data.begin(), data.end());
  return array;
}

llvm::Error tessel::writeNpy(llvm::StringRef path, const NpyArray &array) {
  // A 1-D shape is written "(n,)", as Python prints a one-element tuple.
  std::string dims = llvm::join(
      llvm::map_range(array.shape,
                      [](int64_t size) { return std::to_string(size); }),
      ", ");
  if (array.shape.size() == 1)
    dims += ",";
  std::string header = "{'descr': '" + array.dtype +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + newline, a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  llvm::SmallString<128> temporary(path);
  temporary += ".tmp%%%%%%";
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(temporary, fd, temporary))
    return npyError(path, "cannot create: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(kMagic, 6);
    os << char(1) << char(0) << char(header.size() & 0xff)
       << char(header.size() >> 8);
    os << header;
    os.write(array.data.data(), array.data.size());
    os.flush();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return npyError(path, "write failed");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return npyError(path, "cannot write: " + ec.message());
  }
  return llvm::Error::success();
}
