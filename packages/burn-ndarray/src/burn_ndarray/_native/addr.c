/* burn_ndarray native: `addr(ndarray) -> int`, the address of the array's data, and
 * `caddr(ndarray) -> int`, the same for a C-contiguous array and 0 otherwise.
 *
 * `arr.ctypes.data` and `arr.flags` build a helper object per call (~3 us and ~0.5 us, three
 * and two per binary op): these are field reads. Built beside kernels.c when Python's and numpy's headers exist; otherwise
 * burn_ndarray uses `arr.ctypes.data`. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>

static PyTypeObject *ndarray_type = NULL;

static PyObject *addr(PyObject *self, PyObject *obj) {
  if (ndarray_type == NULL || !PyObject_TypeCheck(obj, ndarray_type)) {
    PyErr_SetString(PyExc_TypeError, "addr: expected a numpy.ndarray");
    return NULL;
  }
  return PyLong_FromVoidPtr(PyArray_DATA((PyArrayObject *)obj));
}

static PyObject *caddr(PyObject *self, PyObject *obj) {
  if (ndarray_type == NULL || !PyObject_TypeCheck(obj, ndarray_type)) {
    PyErr_SetString(PyExc_TypeError, "caddr: expected a numpy.ndarray");
    return NULL;
  }
  if (!PyArray_CHKFLAGS((PyArrayObject *)obj, NPY_ARRAY_C_CONTIGUOUS)) return PyLong_FromLong(0);
  return PyLong_FromVoidPtr(PyArray_DATA((PyArrayObject *)obj));
}

static PyObject *set_type(PyObject *self, PyObject *obj) {
  if (!PyType_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "set_type: expected numpy.ndarray");
    return NULL;
  }
  Py_XDECREF(ndarray_type);
  Py_INCREF(obj);
  ndarray_type = (PyTypeObject *)obj;
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"addr", addr, METH_O, "address of an ndarray's data"},
    {"caddr", caddr, METH_O, "address of a C-contiguous ndarray's data, else 0"},
    {"set_type", set_type, METH_O, "the numpy.ndarray type"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "burn_native_addr", NULL, -1, methods};

PyMODINIT_FUNC PyInit_burn_native_addr(void) { return PyModule_Create(&module); }
