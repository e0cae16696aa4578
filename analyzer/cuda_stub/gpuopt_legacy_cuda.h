// Forced into every parse (toolkit and bundled declarations): declarations of the CUDA runtime API
// that CUDA 12 removed but Fermi-to-Pascal-era code (and every lecture) still uses, so that such
// code parses with a current toolkit. Declarations only: gpuopt-lint never links, and a
// declaration repeated with the same signature is harmless where a toolkit still has it.
// Define GPUOPT_NO_LEGACY_CUDA to leave them out.
#pragma once
#ifndef GPUOPT_LEGACY_CUDA_H
#define GPUOPT_LEGACY_CUDA_H
#if !defined(GPUOPT_NO_LEGACY_CUDA) && defined(__cplusplus)

// Thread-era context API (deprecated in CUDA 4, removed in 12): the cudaDevice* names replaced them.
extern __attribute__((host)) cudaError_t cudaThreadSynchronize(void);
extern __attribute__((host)) cudaError_t cudaThreadExit(void);
extern __attribute__((host)) cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value);
extern __attribute__((host)) cudaError_t cudaThreadGetLimit(size_t* value, enum cudaLimit limit);
extern __attribute__((host)) cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache* config);
extern __attribute__((host)) cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config);

#if !defined(CUDART_VERSION) || CUDART_VERSION >= 12000
// Texture and surface references (removed in CUDA 12; texture objects replaced them).
struct __gpuopt_texture_reference {
  int normalized;
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureAddressMode addressMode[3];
  struct cudaChannelFormatDesc channelDesc;
  int sRGB;
  unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
  int disableTrilinearOptimization;
};
typedef __gpuopt_texture_reference textureReference;
struct __gpuopt_surface_reference {
  struct cudaChannelFormatDesc channelDesc;
};
typedef __gpuopt_surface_reference surfaceReference;

#define cudaTextureType1D 0x01
#define cudaTextureType2D 0x02
#define cudaTextureType3D 0x03
#define cudaTextureTypeCubemap 0x0C
#define cudaTextureType1DLayered 0xF1
#define cudaTextureType2DLayered 0xF2
#define cudaTextureTypeCubemapLayered 0xFC
#define cudaSurfaceType1D 0x01
#define cudaSurfaceType2D 0x02
#define cudaSurfaceType3D 0x03
#define cudaSurfaceTypeCubemap 0x0C
#define cudaSurfaceType1DLayered 0xF1
#define cudaSurfaceType2DLayered 0xF2
#define cudaSurfaceTypeCubemapLayered 0xFC

// `texture<T, dim, mode>` file-scope variables are usable in device code as they were with nvcc.
template <class T, int texType = cudaTextureType1D, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct __attribute__((device_builtin_texture_type)) texture : public textureReference {
  __attribute__((host)) texture(int norm = 0, enum cudaTextureFilterMode fMode = cudaFilterModePoint,
                                enum cudaTextureAddressMode aMode = cudaAddressModeClamp);
  __attribute__((host)) texture(int norm, enum cudaTextureFilterMode fMode, enum cudaTextureAddressMode aMode,
                                struct cudaChannelFormatDesc desc);
};
template <class T, int dim = 1>
struct __attribute__((device_builtin_surface_type)) surface : public surfaceReference {
  __attribute__((host)) surface();
  __attribute__((host)) surface(struct cudaChannelFormatDesc desc);
};

// What a fetch returns: the element type, or floats for cudaReadModeNormalizedFloat.
template <class T, enum cudaTextureReadMode mode> struct __gpuopt_tex_ret { typedef T type; };
template <class T> struct __gpuopt_tex_ret<T, cudaReadModeNormalizedFloat> { typedef float type; };
#define GPUOPT_TEX_NORM4(V) template <> struct __gpuopt_tex_ret<V##4, cudaReadModeNormalizedFloat> { typedef float4 type; }; \
  template <> struct __gpuopt_tex_ret<V##2, cudaReadModeNormalizedFloat> { typedef float2 type; }; \
  template <> struct __gpuopt_tex_ret<V##1, cudaReadModeNormalizedFloat> { typedef float1 type; };
GPUOPT_TEX_NORM4(char)
GPUOPT_TEX_NORM4(uchar)
GPUOPT_TEX_NORM4(short)
GPUOPT_TEX_NORM4(ushort)
#undef GPUOPT_TEX_NORM4
#define GPUOPT_TEX_RET typename __gpuopt_tex_ret<T, mode>::type

template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex1Dfetch(texture<T, d, mode> t, int x);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex1D(texture<T, d, mode> t, float x);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex2D(texture<T, d, mode> t, float x, float y);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex3D(texture<T, d, mode> t, float x, float y, float z);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex1DLayered(texture<T, d, mode> t, float x, int layer);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex2DLayered(texture<T, d, mode> t, float x, float y, int layer);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET texCubemap(texture<T, d, mode> t, float x, float y, float z);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex1DLod(texture<T, d, mode> t, float x, float level);
template <class T, int d, enum cudaTextureReadMode mode>
__attribute__((device)) GPUOPT_TEX_RET tex2DLod(texture<T, d, mode> t, float x, float y, float level);
#undef GPUOPT_TEX_RET

template <class V, class T, int dim>
__attribute__((device)) void surf1Dwrite(V val, surface<T, dim> s, int x, enum cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap);
template <class V, class T, int dim>
__attribute__((device)) void surf2Dwrite(V val, surface<T, dim> s, int x, int y, enum cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap);
template <class V, class T, int dim>
__attribute__((device)) void surf3Dwrite(V val, surface<T, dim> s, int x, int y, int z, enum cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap);
template <class V, class T, int dim>
__attribute__((device)) void surf1Dread(V* val, surface<T, dim> s, int x, enum cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap);
template <class V, class T, int dim>
__attribute__((device)) void surf2Dread(V* val, surface<T, dim> s, int x, int y, enum cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap);
template <class V, class T, int dim>
__attribute__((device)) void surf3Dread(V* val, surface<T, dim> s, int x, int y, int z, enum cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap);

// Host side: binding references to memory.
extern __attribute__((host)) cudaError_t cudaBindTexture(size_t* offset, const textureReference* texref, const void* devPtr,
                                                         const struct cudaChannelFormatDesc* desc, size_t size = ~(size_t)0);
extern __attribute__((host)) cudaError_t cudaBindTexture2D(size_t* offset, const textureReference* texref, const void* devPtr,
                                                           const struct cudaChannelFormatDesc* desc, size_t width,
                                                           size_t height, size_t pitch);
extern __attribute__((host)) cudaError_t cudaBindTextureToArray(const textureReference* texref, cudaArray_const_t array,
                                                                const struct cudaChannelFormatDesc* desc);
extern __attribute__((host)) cudaError_t cudaUnbindTexture(const textureReference* texref);
extern __attribute__((host)) cudaError_t cudaGetTextureReference(const textureReference** texref, const void* symbol);
extern __attribute__((host)) cudaError_t cudaGetTextureAlignmentOffset(size_t* offset, const textureReference* texref);
extern __attribute__((host)) cudaError_t cudaBindSurfaceToArray(const surfaceReference* surfref, cudaArray_const_t array,
                                                                const struct cudaChannelFormatDesc* desc);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaBindTexture(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                                  size_t size = ~(size_t)0);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaBindTexture(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                                  const struct cudaChannelFormatDesc& desc, size_t size = ~(size_t)0);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaBindTexture2D(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                                    size_t width, size_t height, size_t pitch);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaBindTexture2D(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                                    const struct cudaChannelFormatDesc& desc, size_t width, size_t height,
                                                    size_t pitch);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaBindTextureToArray(const texture<T, dim, mode>& tex, cudaArray_const_t array);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaBindTextureToArray(const texture<T, dim, mode>& tex, cudaArray_const_t array,
                                                         const struct cudaChannelFormatDesc& desc);
template <class T, int dim, enum cudaTextureReadMode mode>
__attribute__((host)) cudaError_t cudaUnbindTexture(const texture<T, dim, mode>& tex);
template <class T, int dim>
__attribute__((host)) cudaError_t cudaBindSurfaceToArray(const surface<T, dim>& surf, cudaArray_const_t array);
template <class T, int dim>
__attribute__((host)) cudaError_t cudaBindSurfaceToArray(const surface<T, dim>& surf, cudaArray_const_t array,
                                                         const struct cudaChannelFormatDesc& desc);
#endif  // CUDART_VERSION >= 12000

#endif  // !GPUOPT_NO_LEGACY_CUDA
#endif
