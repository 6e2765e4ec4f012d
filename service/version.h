/*
 * version.h — the program's version (`onnxviz --version`, artifact names in the store).
 */
#ifndef OXS_VERSION_H
#define OXS_VERSION_H

#define OXS_VERSION "0.1.0"

#endif /* OXS_VERSION_H */
