! tbtune.f90: the Fortran module over the C API (tbtune.h), through iso_c_binding.
! Compile this file with your application (Fortran .mod files are compiler-specific, so the
! source is installed, not a .mod), link libtbtune (pkg-config tbtune, or tbtune::tbtune).
!
!   use tbtune
!   type(tbtune_options) :: o
!   type(c_ptr) :: k, a, b, out
!   integer(c_int) :: st, reason
!   o%policy = TBTUNE_POLICY_NEAREST
!   st = tbtune_lookup("heat.yaml", o, k, reason)
!   if (st /= TBTUNE_OK .or. .not. c_associated(k)) print *, tbtune_message()
!   st = tbtune_run(k, a, b, 1000_c_long, c_null_ptr, out)
module tbtune
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: TBTUNE_OK = 0, TBTUNE_ERR_BAD_SPEC = 1, &
    TBTUNE_ERR_BAD_ARGUMENT = 2, TBTUNE_ERR_CACHE = 3, TBTUNE_ERR_CUDA = 4, &
    TBTUNE_ERR_COMPILE = 5, TBTUNE_ERR_NO_KERNEL = 6, TBTUNE_ERR_INTERNAL = 7
  integer(c_int), parameter, public :: TBTUNE_POLICY_DEFAULT = -1, TBTUNE_POLICY_FAIL = 0, &
    TBTUNE_POLICY_NAIVE = 1, TBTUNE_POLICY_NEAREST = 2, TBTUNE_POLICY_MODEL = 3
  integer(c_int), parameter, public :: TBTUNE_DTYPE_SPEC = 0, TBTUNE_DTYPE_FLOAT = 1, &
    TBTUNE_DTYPE_DOUBLE = 2
  integer(c_int), parameter, public :: TBTUNE_HIT = 0

  !> Lookup options, laid out as the C struct tbtune_options; zero means "the spec's".
  type, bind(c), public :: tbtune_options
    type(c_ptr) :: db = c_null_ptr        ! C string of the cache path; null: the default
    integer(c_long) :: nx = 0, ny = 0, nz = 0
    integer(c_int) :: dtype = 0           ! TBTUNE_DTYPE_*
    integer(c_long) :: steps = 0
    integer(c_int) :: policy = -1         ! TBTUNE_POLICY_*
  end type

  public :: tbtune_lookup, tbtune_naive, tbtune_run, tbtune_kernel_free, tbtune_message, &
            tbtune_reason, tbtune_strategy, tbtune_kernel_shape, tbtune_device_alloc, tbtune_device_free, &
            tbtune_copy_to_device, tbtune_copy_to_host, tbtune_synchronize

  interface
    function c_lookup(spec_path, options, kernel, reason) bind(c, name="tbtune_lookup")
      import :: c_char, c_ptr, c_int, tbtune_options
      character(kind=c_char), dimension(*), intent(in) :: spec_path
      type(tbtune_options), intent(in) :: options
      type(c_ptr), intent(out) :: kernel
      integer(c_int), intent(out) :: reason
      integer(c_int) :: c_lookup
    end function
    function c_naive(spec_path, options, kernel) bind(c, name="tbtune_naive")
      import :: c_char, c_ptr, c_int, tbtune_options
      character(kind=c_char), dimension(*), intent(in) :: spec_path
      type(tbtune_options), intent(in) :: options
      type(c_ptr), intent(out) :: kernel
      integer(c_int) :: c_naive
    end function
    !> Advances steps time steps from a (ping-ponging with b) on stream; result: the array
    !> holding the result.
    function tbtune_run(kernel, a, b, steps, stream, result) bind(c, name="tbtune_run")
      import :: c_ptr, c_long, c_int
      type(c_ptr), value :: kernel, a, b, stream
      integer(c_long), value :: steps
      type(c_ptr), intent(out) :: result
      integer(c_int) :: tbtune_run
    end function
    subroutine tbtune_kernel_free(kernel) bind(c, name="tbtune_kernel_free")
      import :: c_ptr
      type(c_ptr), value :: kernel
    end subroutine
    function c_last_message() bind(c, name="tbtune_last_message")
      import :: c_ptr
      type(c_ptr) :: c_last_message
    end function
    function c_reason_name(reason) bind(c, name="tbtune_reason_name")
      import :: c_ptr, c_int
      integer(c_int), value :: reason
      type(c_ptr) :: c_reason_name
    end function
    function c_kernel_strategy(kernel) bind(c, name="tbtune_kernel_strategy")
      import :: c_ptr
      type(c_ptr), value :: kernel
      type(c_ptr) :: c_kernel_strategy
    end function
    !> The domain (nx, ny, nz) and dtype (TBTUNE_DTYPE_FLOAT / _DOUBLE) the kernel was built for.
    function tbtune_kernel_shape(kernel, domain, dtype) bind(c, name="tbtune_kernel_shape")
      import :: c_ptr, c_long, c_int
      type(c_ptr), value :: kernel
      integer(c_long), intent(out) :: domain(3)
      integer(c_int), intent(out) :: dtype
      integer(c_int) :: tbtune_kernel_shape
    end function
    function tbtune_device_alloc(bytes, ptr) bind(c, name="tbtune_device_alloc")
      import :: c_size_t, c_ptr, c_int
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(out) :: ptr
      integer(c_int) :: tbtune_device_alloc
    end function
    function tbtune_device_free(ptr) bind(c, name="tbtune_device_free")
      import :: c_ptr, c_int
      type(c_ptr), value :: ptr
      integer(c_int) :: tbtune_device_free
    end function
    function tbtune_copy_to_device(dst, src, bytes) bind(c, name="tbtune_copy_to_device")
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: dst, src
      integer(c_size_t), value :: bytes
      integer(c_int) :: tbtune_copy_to_device
    end function
    function tbtune_copy_to_host(dst, src, bytes) bind(c, name="tbtune_copy_to_host")
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: dst, src
      integer(c_size_t), value :: bytes
      integer(c_int) :: tbtune_copy_to_host
    end function
    function tbtune_synchronize() bind(c, name="tbtune_synchronize")
      import :: c_int
      integer(c_int) :: tbtune_synchronize
    end function
  end interface

contains

  !> Looks up the spec at path on the current device; kernel is null on a miss that the
  !> policy did not serve, and reason (TBTUNE_HIT or a miss reason) says why.
  integer(c_int) function tbtune_lookup(path, options, kernel, reason)
    character(len=*), intent(in) :: path
    type(tbtune_options), intent(in) :: options
    type(c_ptr), intent(out) :: kernel
    integer(c_int), intent(out) :: reason
    tbtune_lookup = c_lookup(trim(path) // c_null_char, options, kernel, reason)
  end function

  !> The naive reference kernel for the spec at path.
  integer(c_int) function tbtune_naive(path, options, kernel)
    character(len=*), intent(in) :: path
    type(tbtune_options), intent(in) :: options
    type(c_ptr), intent(out) :: kernel
    tbtune_naive = c_naive(trim(path) // c_null_char, options, kernel)
  end function

  !> The calling thread's last message (an error, or what the last lookup found).
  function tbtune_message() result(text)
    character(len=:), allocatable :: text
    text = from_c(c_last_message())
  end function

  !> "hit", "no_cache", "other_domain", ...
  function tbtune_reason(reason) result(text)
    integer(c_int), intent(in) :: reason
    character(len=:), allocatable :: text
    text = from_c(c_reason_name(reason))
  end function

  !> The kernel's strategy name.
  function tbtune_strategy(kernel) result(text)
    type(c_ptr), intent(in) :: kernel
    character(len=:), allocatable :: text
    text = from_c(c_kernel_strategy(kernel))
  end function

  ! A NUL-terminated C string as a Fortran string.
  function from_c(p) result(text)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    if (.not. c_associated(p)) then
      text = ""
      return
    end if
    call c_f_pointer(p, chars, [huge(0)])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: text)
    text = transfer(chars(1:n), text)
  end function

end module tbtune
