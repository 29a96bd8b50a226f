#include "onnx/Npy.h"

#include "base/Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace opgen::onnx_import {

namespace {

// The one table of the element types a model's tensors may have: numpy's name, ONNX's number and
// the op language's type with the same bytes. uint8 comes before bool, so a u8 tensor is written
// as uint8.
struct ElementType {
    const char *descr;
    int onnx_type;
    DType dtype;
};

const ElementType kElementTypes[] = {{"<f4", 1, DType::F32}, {"|u1", 2, DType::U8}, {"|i1", 3, DType::I8},
                                     {"<i4", 6, DType::I32}, {"<i8", 7, DType::I64}, {"|b1", 9, DType::U8}};

const ElementType *by_descr(const std::string &descr) {
    for (const ElementType &t : kElementTypes)
        if (descr == t.descr) return &t;
    return nullptr;
}

}  // namespace

std::optional<DType> onnx_element_dtype(int onnx_type) {
    for (const ElementType &t : kElementTypes)
        if (t.onnx_type == onnx_type) return t.dtype;
    return std::nullopt;
}

NpyArray read_npy_array(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    user_check(in.good()) << "cannot read '" << path << "'";
    std::stringstream buf;
    buf << in.rdbuf();
    std::string bytes = buf.str();
    user_check(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0) << "'" << path << "' is not a .npy file";
    unsigned char major = static_cast<unsigned char>(bytes[6]);
    size_t header_len = 0, start = major == 1 ? 10 : 12;
    user_check(bytes.size() >= start) << "'" << path << "': truncated .npy header";
    for (size_t i = start; i-- > 8;) header_len = header_len * 256 + static_cast<unsigned char>(bytes[i]);
    user_check(bytes.size() >= start + header_len) << "'" << path << "': truncated .npy header";
    std::string header = bytes.substr(start, header_len);
    std::smatch descr, order, shape;
    user_check(std::regex_search(header, descr, std::regex("'descr':\\s*'([^']*)'")) &&
               std::regex_search(header, order, std::regex("'fortran_order':\\s*(True|False)")) &&
               std::regex_search(header, shape, std::regex("'shape':\\s*\\(([^)]*)\\)")))
        << "'" << path << "': bad .npy header";
    NpyArray a;
    const ElementType *type = by_descr(descr[1]);
    user_check(type) << "'" << path << "': dtype " << descr[1]
                     << ", expected float32 (<f4), int32 (<i4), int64 (<i8), bool (|b1), uint8 (|u1) or int8 (|i1)";
    a.onnx_type = type->onnx_type;
    user_check(order[1] == "False") << "'" << path << "': Fortran order is not supported";
    std::stringstream dims(shape[1].str());
    std::string part;
    size_t count = 1;
    while (std::getline(dims, part, ','))
        if (part.find_first_not_of(' ') != std::string::npos) {
            long long d = std::atoll(part.c_str());
            user_check(d >= 0 && d < (1ll << 40) && count * size_t(d + 1) < (size_t(1) << 40))
                << "'" << path << "': bad dimension '" << part << "'";
            a.dims.push_back(d);
            count *= size_t(d);
        }
    const size_t data = bytes.size() - start - header_len, want = count * size_t(dtype_bytes(type->dtype));
    user_check(data == want) << "'" << path << "': " << data << " data bytes, the shape needs " << want;
    a.bytes = bytes.substr(start + header_len);
    return a;
}

HostTensor read_npy(const std::string &path) {
    NpyArray a = read_npy_array(path);
    user_check(a.onnx_type == 1) << "'" << path << "': expected float32 (<f4)";
    HostTensor t;
    t.dims = a.dims;
    t.data.resize(size_t(t.elements()));
    std::memcpy(t.data.data(), a.bytes.data(), a.bytes.size());
    return t;
}

HostTensor host_tensor(const NpyArray &a) {
    const std::optional<DType> t = onnx_element_dtype(a.onnx_type);
    internal_check(t.has_value()) << "npy array of ONNX type " << a.onnx_type;
    HostTensor h = make_host_tensor(*t, a.dims);
    internal_check(int64_t(a.bytes.size()) == h.byte_size()) << "npy array of " << a.bytes.size() << " bytes";
    std::memcpy(h.host(), a.bytes.data(), a.bytes.size());
    return h;
}

std::string npy_bytes(const HostTensor &t) {
    std::string shape;
    for (auto d : t.dims) shape += std::to_string(d) + ", ";
    if (t.dims.size() > 1) shape.erase(shape.size() - 2);
    else if (t.dims.size() == 1) shape.pop_back();
    const ElementType *type = std::find_if(std::begin(kElementTypes), std::end(kElementTypes),
                                           [&](const ElementType &e) { return e.dtype == t.dtype; });
    internal_check(type != std::end(kElementTypes)) << "no .npy type for " << dtype_name(t.dtype);
    const char *descr = type->descr;
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
    header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char(header.size() >> 8);
    out += header;
    out.append(static_cast<const char *>(t.host()), size_t(t.byte_size()));
    return out;
}

}  // namespace opgen::onnx_import
