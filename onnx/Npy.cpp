#include "onnx/Npy.h"

#include "base/Error.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace opgen::onnx_import {

namespace {

// numpy's type names and ONNX's numbers for them.
int onnx_type_of(const std::string &descr) {
    static const std::pair<const char *, int> types[] = {{"<f4", 1}, {"|u1", 2}, {"|i1", 3},
                                                        {"<i4", 6}, {"<i8", 7}, {"|b1", 9}};
    for (const auto &[name, type] : types)
        if (descr == name) return type;
    return 0;
}

size_t element_bytes(int onnx_type) { return onnx_type == 7 ? 8 : onnx_type == 1 || onnx_type == 6 ? 4 : 1; }

}  // namespace

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
    a.onnx_type = onnx_type_of(descr[1]);
    user_check(a.onnx_type != 0) << "'" << path << "': dtype " << descr[1]
                                 << ", expected float32 (<f4), int32 (<i4), int64 (<i8), bool (|b1), uint8 (|u1) or int8 (|i1)";
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
    const size_t data = bytes.size() - start - header_len, want = count * element_bytes(a.onnx_type);
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
    const DType t = a.onnx_type == 1 ? DType::F32 : a.onnx_type == 3 ? DType::I8 : a.onnx_type == 6 ? DType::I32
                    : a.onnx_type == 7 ? DType::I64 : DType::U8;
    HostTensor h = make_host_tensor(t, a.dims);
    internal_check(int64_t(a.bytes.size()) == h.byte_size()) << "npy array of " << a.bytes.size() << " bytes";
    std::memcpy(h.host(), a.bytes.data(), a.bytes.size());
    return h;
}

std::string npy_bytes(const HostTensor &t) {
    std::string shape;
    for (auto d : t.dims) shape += std::to_string(d) + ", ";
    if (t.dims.size() > 1) shape.erase(shape.size() - 2);
    else if (t.dims.size() == 1) shape.pop_back();
    const char *descr = t.dtype == DType::I64 ? "<i8" : t.dtype == DType::I32 ? "<i4" : t.dtype == DType::U8 ? "|u1"
                        : t.dtype == DType::I8 ? "|i1" : "<f4";
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
