#include "onnx/Npy.h"

#include "base/Error.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace opgen::onnx_import {

HostTensor read_npy(const std::string &path) {
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
    user_check(descr[1] == "<f4") << "'" << path << "': dtype " << descr[1] << ", expected float32 (<f4)";
    user_check(order[1] == "False") << "'" << path << "': Fortran order is not supported";
    HostTensor t;
    std::stringstream dims(shape[1].str());
    std::string part;
    while (std::getline(dims, part, ','))
        if (part.find_first_not_of(' ') != std::string::npos) t.dims.push_back(std::stoll(part));
    size_t count = size_t(t.elements());
    user_check(bytes.size() - start - header_len == count * 4)
        << "'" << path << "': " << bytes.size() - start - header_len << " data bytes, the shape needs " << count * 4;
    t.data.resize(count);
    std::memcpy(t.data.data(), bytes.data() + start + header_len, count * 4);
    return t;
}

std::string npy_bytes(const HostTensor &t) {
    std::string shape;
    for (auto d : t.dims) shape += std::to_string(d) + ", ";
    if (t.dims.size() > 1) shape.erase(shape.size() - 2);
    else if (t.dims.size() == 1) shape.pop_back();
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
    header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char(header.size() >> 8);
    out += header;
    out.append(reinterpret_cast<const char *>(t.data.data()), t.data.size() * 4);
    return out;
}

}  // namespace opgen::onnx_import
